"""Clean: forward calls a helper defined in another module (_helpers.scaled_residual) that only does tensor math with a constant. Look-alike of pytorch/pytorch#132165 (helpers from an imported module called inside compiled code)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _helpers

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/132165"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _helpers.scaled_residual(x, self.linear(x), 0.5)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
