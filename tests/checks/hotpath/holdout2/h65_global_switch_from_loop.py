"""Hazard: forward branches on a module-level `_variable` that the driver script flips between calls. From pytorch/pytorch#127483: cache_size_limit reached when inlining nn module (guards G['_variable'] == 0)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/127483"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

_variable = 0


class SkipModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _variable == 0:
            return self.linear(x)
        return x + 1


def build() -> nn.Module:
    return SkipModule()


def step(model: nn.Module, i: int) -> None:
    global _variable
    _variable = i % 2
    with torch.no_grad():
        model(torch.randn(4, 8))
