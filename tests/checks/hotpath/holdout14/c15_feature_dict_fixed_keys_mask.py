"""Clean: the multimodal encoder still takes its batch as a dict and iterates `features.items()`, but the collator always emits every modality key with a tensor (zeros plus a per-sample presence mask for a missing image or audio), so the dict's keys and value types never change between batches and the encoder compiles once. From pytorch/pytorch#151122 (guards on the keys and None-ness of dictionary values; a stable key set avoids the second graph)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/151122"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

_ALL = ("text", "image", "audio")


class MultimodalEncoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.projections = nn.ModuleDict({name: nn.Linear(dim, dim) for name in _ALL})
        self.head = nn.Linear(dim, dim)

    def forward(self, features: dict[str, torch.Tensor], present: dict[str, torch.Tensor]) -> torch.Tensor:
        fused = torch.zeros_like(features["text"])
        for name, value in features.items():
            fused = fused + self.projections[name](value) * present[name].unsqueeze(-1)
        return self.head(fused)


def build() -> nn.Module:
    return MultimodalEncoder()


_MODALITIES = [("text",), ("text", "image"), ("text",), ("text", "audio"), ("text", "image", "audio"), ("text",), ("text", "image"), ("text", "audio")]


def step(model: nn.Module, i: int) -> None:
    # the collator pads absent modalities with zeros and marks them absent instead of dropping the key
    features = {name: torch.randn(4, 8) if name in _MODALITIES[i] else torch.zeros(4, 8) for name in _ALL}
    present = {name: torch.full((4,), float(name in _MODALITIES[i])) for name in _ALL}
    with torch.no_grad():
        model(features, present)
