"""Clean: forward uses getattr with constant attribute names (a fixed pair of projections) rather than names computed from mutable state. Look-alike of Baijiong-Lin/LoRA-Torch#4 (`getattr(self, f'...')` under torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Baijiong-Lin/LoRA-Torch/issues/4"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    PROJECTIONS = ("q_proj", "v_proj")

    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.v_proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x
        for name in self.PROJECTIONS:
            out = out + getattr(self, name)(x)
        return out + getattr(self, "q_proj", None)(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
