"""Hazard: a multimodal encoder takes its batch as a dict of optional feature tensors and iterates `features.items()`; batches that carry a different subset of modalities (an optional image or audio entry present or absent) change the dict's keys, which Dynamo guards on, so each new key set recompiles. From pytorch/pytorch#151122 (avoid guarding on ids of optional dictionary tensor values: a dict with different keys generates two graphs)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/pytorch/pytorch/issues/151122"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class MultimodalEncoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.projections = nn.ModuleDict(
            {"text": nn.Linear(dim, dim), "image": nn.Linear(dim, dim), "audio": nn.Linear(dim, dim)}
        )
        self.head = nn.Linear(dim, dim)

    def forward(self, features: dict[str, torch.Tensor | None]) -> torch.Tensor:
        fused = None
        for name, value in features.items():
            if value is None:
                continue
            projected = self.projections[name](value)
            fused = projected if fused is None else fused + projected
        return self.head(fused)


def build() -> nn.Module:
    return MultimodalEncoder()


_MODALITIES = [("text",), ("text", "image"), ("text",), ("text", "audio"), ("text", "image", "audio"), ("text",), ("text", "image"), ("text", "audio")]


def step(model: nn.Module, i: int) -> None:
    # the collator only puts the modalities a batch actually has into the dict
    features = {name: torch.randn(4, 8) for name in _MODALITIES[i]}
    with torch.no_grad():
        model(features)
