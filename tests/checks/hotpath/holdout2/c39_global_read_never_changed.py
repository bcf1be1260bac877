"""Clean: forward reads the module-level switch, which only the import sets. From pytorch/pytorch#127483 (the global left alone)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/127483"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

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
    with torch.no_grad():
        model(torch.randn(4, 8))
