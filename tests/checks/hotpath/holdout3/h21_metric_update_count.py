"""Hazard: the forward feeds a torchmetrics-style metric whose `update` bumps a Python `_update_count`, so Dynamo guards on the count and recompiles every step until the limit. From Lightning-AI/torchmetrics#1780 (hit cache_size_limit, reason `self._update_count == 0`)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
        self.train_loss = _helpers_b.RunningMeanMetric()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logits = self.backbone(x)
        loss = nn.functional.cross_entropy(logits, y)
        self.train_loss.update(loss)
        return loss


def build() -> nn.Module:
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.randint(0, 4, (4,)))
