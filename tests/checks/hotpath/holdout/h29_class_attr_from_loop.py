"""Hazard: the loop changes a class attribute that forward multiplies by (a global scale kept on the class). From pytorch/pytorch#176851: [regression] torch.compile does not recompile when class attribute is mutated between calls."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/176851"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}


class GlobalState:
    factor = 1.0


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * GlobalState.factor


def build() -> nn.Module:
    GlobalState.factor = 1.0
    return Model()


def step(model: nn.Module, i: int) -> None:
    GlobalState.factor = 1.0 + i
    with torch.no_grad():
        model(torch.randn(4, 8))
