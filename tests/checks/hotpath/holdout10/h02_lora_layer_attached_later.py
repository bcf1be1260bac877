"""Hazard: a diffusers-style `LoraCompatibleLinear` is compiled with `lora_layer = None`; partway through the run the
pipeline calls `set_lora_layer(...)` (loading an adapter), so the `if self.lora_layer is None` branch flips and the
forward recompiles. From pytorch/pytorch#120958 (torch.compile correctness when nn.Module attribute changes)."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/120958"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoRALinearLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, rank: int = 2) -> None:
        super().__init__()
        self.down = nn.Linear(in_features, rank, bias=False)
        self.up = nn.Linear(rank, out_features, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.up(self.down(hidden_states))


class LoraCompatibleLinear(nn.Linear):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lora_layer: Optional[nn.Module] = None

    def set_lora_layer(self, lora_layer: Optional[nn.Module]) -> None:
        self.lora_layer = lora_layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.lora_layer is None:
            return super().forward(x)
        return super().forward(x) + self.lora_layer(x)


class AttnProcessorBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = LoraCompatibleLinear(8, 8)
        self.to_out = LoraCompatibleLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.to_out(torch.relu(self.to_q(x)))


def build() -> nn.Module:
    return AttnProcessorBlock()


def step(model: nn.Module, i: int) -> None:
    if i == 4:  # pipe.load_lora_weights(...) between two generations
        model.to_q.set_lora_layer(LoRALinearLayer(8, 8))
        model.to_out.set_lora_layer(LoRALinearLayer(8, 8))
    with torch.no_grad():
        model(torch.randn(2, 8))
