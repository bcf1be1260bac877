"""Clean: the metrics-library-style running mean is updated by the loop after the compiled forward returns, and a loop-side helper from another module logs the loss. Look-alike of Lightning-AI/torchmetrics#1780 (keep metric updates out of the compiled region)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _helpers, _thirdparty

LABEL = None
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act_mean = _thirdparty.RunningMean()
        self.log: dict = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        out = model(torch.randn(4, 8))
    model.act_mean.update(out)
    _helpers.record_loss(model.log, out.mean())
