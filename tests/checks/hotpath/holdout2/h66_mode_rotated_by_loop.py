"""Hazard: the driver rotates an integer `mode` on the module through three values and forward dispatches on it. From pytorch/pytorch#127483 (guard L['self'].mode == 2)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/127483"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class ModeModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.mode = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == 1:
            return self.linear(x).relu()
        if self.mode == 2:
            return self.linear(x).sigmoid()
        return self.linear(x)


def build() -> nn.Module:
    return ModeModule()


def step(model: nn.Module, i: int) -> None:
    model.mode = i % 3
    with torch.no_grad():
        model(torch.randn(4, 8))
