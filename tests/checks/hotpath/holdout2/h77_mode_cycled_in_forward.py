"""Hazard: forward cycles its own integer mode after each call (`self.mode = (self.mode + 1) % 3`). From pytorch/pytorch#127483 (guards on L['self'].mode)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/pytorch/pytorch/issues/127483"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class ModeModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.mode = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.linear(x) * (self.mode + 1)
        self.mode = (self.mode + 1) % 3
        return out


def build() -> nn.Module:
    return ModeModule()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
