"""Hazard: a recommendation model updates a torchmetrics-style windowed metric inside its compiled forward; the
metric's `update()` bumps the Python int `_update_count` on every call, Dynamo specialises on the module int and
recompiles on every step. From meta-pytorch/torchrec#4338 (test_xauc_compile hitting the
recompile limit through Metric._update_count)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_a import WindowedMSE

LABEL = "library-object"
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4338"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class RankingModelWithMetrics(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.over_arch = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
        self.mse = WindowedMSE()

    def forward(self, dense: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.over_arch(dense).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        self.mse.update(torch.sigmoid(logits), labels)
        return loss, self.mse.compute()


def build() -> nn.Module:
    return RankingModelWithMetrics()


def step(model: nn.Module, i: int) -> None:
    dense = torch.randn(4, 8)
    labels = (torch.arange(4) % 2).float()
    loss, _ = model(dense, labels)
    loss.backward()
