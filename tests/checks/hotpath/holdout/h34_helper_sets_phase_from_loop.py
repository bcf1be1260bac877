"""Hazard: the loop calls a helper from another module (_helpers.set_phase) that rewrites a string phase on the model; forward branches on it. From pytorch/pytorch#132165: Mutating global variable during inlining a function from imported module breaks in dynamo (state owned by an imported helper module)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _helpers

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/132165"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.phase = _helpers.PHASES[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        return h * 0.1 if self.phase == "warmup" else h


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    _helpers.set_phase(model, i)
    with torch.no_grad():
        model(torch.randn(4, 8))
