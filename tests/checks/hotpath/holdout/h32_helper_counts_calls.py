"""Hazard: forward calls a bookkeeping helper from another module (_helpers.count_call) that bumps a Python int on the module. From pytorch/pytorch#132165: Mutating global variable during inlining a function from imported module breaks in dynamo."""
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
        self.n_calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _helpers.count_call(self)
        return self.linear(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
