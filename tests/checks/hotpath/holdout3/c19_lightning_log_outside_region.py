"""Clean: the Lightning-style training step logs the loss with `self.log(...)` every step, but only the network is compiled; logging (std logger, dict, `float(loss)`) runs eagerly in the step, so the region compiles once with no break. Look-alike of Lightning-AI/pytorch-lightning#17177."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = None
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17177"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "net"


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(x)))


class LitRegressor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = MLP()
        self._results = _helpers_b.ResultCollection()
        self._logger_state: dict = {}

    def log(self, name: str, value: torch.Tensor) -> None:
        self._results.log(name, value)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss)
        _helpers_b.rank_zero_log_metrics(self._logger_state, {"train_loss": loss}, batch_idx)
        return loss


def build() -> nn.Module:
    return LitRegressor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model.training_step((torch.randn(4, 8), torch.randn(4)), i)
