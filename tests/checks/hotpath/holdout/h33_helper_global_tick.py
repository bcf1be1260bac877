"""Hazard: forward asks a helper in another module for the next tick of a module-scoped counter and uses it to pick a rotation. From pytorch/pytorch#132165: Mutating global variable during inlining a function from imported module breaks in dynamo."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _helpers

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/132165"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shift = _helpers.next_tick() % 4
        return torch.roll(self.linear(x), shifts=shift, dims=-1)


def build() -> nn.Module:
    _helpers.reset_ticks()
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
