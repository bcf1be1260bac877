"""Hazard: a helper method takes a mutable default dict (`stats={}`) and counts calls in it. From pytorch/pytorch#21545 (pytorch/pytorch#29833 "Check for mutable default parameters": mutable defaults silently keep state between calls)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "mutable-default"
SOURCE = "https://github.com/pytorch/pytorch/issues/21545"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def _scale(self, h: torch.Tensor, stats={}) -> torch.Tensor:  # noqa: B006 - the hazard under test
        stats["calls"] = stats.get("calls", 0) + 1
        return h * (1.0 if stats["calls"] < 4 else 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._scale(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
