"""Hazard: forward updates a metrics-library-style running mean held as an attribute; its update() bumps a Python _update_count. From Lightning-AI/torchmetrics#1780: Using Torchmetrics with `torch.compile` in Pytorch 2.0 (recompiles, reason `self._update_count == 0`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _thirdparty

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act_mean = _thirdparty.RunningMean()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.linear(x))
        self.act_mean.update(out)
        return out


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
