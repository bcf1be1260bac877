"""Hazard: forward increments a module-level global call counter and uses it to decide when to refresh a statistic. From pytorch/pytorch#171488: global dict initialization cause recompilation (mutation of module globals from compiled code)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/pytorch/pytorch/issues/171488"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}

_CALLS = 0


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _CALLS
        _CALLS += 1
        h = self.linear(x)
        if _CALLS % 4 == 0:
            h = h - h.mean()
        return h


def build() -> nn.Module:
    global _CALLS
    _CALLS = 0
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
