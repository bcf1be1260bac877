"""Hazard: a LightningModule-style step compiled whole calls `self.log(...)`, whose result collection writes a debug line through the std logger inside the region, so Dynamo graph-breaks on the logger call and the resumed frame recompiles as the results dict fills. From Lightning-AI/pytorch-lightning#17177 (self.log under torch.compile)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = "graph-break"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17177"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


class LitRegressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 1))
        self._results = _helpers_b.ResultCollection()

    def log(self, name: str, value: torch.Tensor, on_step: bool = True) -> None:
        self._results.log(name, value, on_step=on_step)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss)
        return loss


def build() -> nn.Module:
    return LitRegressor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.randn(4))
