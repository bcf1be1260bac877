"""Hazard: a patched forward increments a Counter object (count = val() + 1) held by the model. From pytorch/pytorch#113333: Torch.compile fails with dynamically modified `nn.module.forward` (counter.incr() inside the new forward)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _thirdparty

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/113333"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.counter = _thirdparty.Counter()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.counter.incr()
        return self.linear(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
