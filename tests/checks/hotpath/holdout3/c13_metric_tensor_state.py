"""Clean: the model feeds a metric on every forward like the torchmetrics report, but the metric is an nn.Module whose running total and count are buffers updated in place (no Python counter, no cache reset), so the region compiles once. Look-alike of Lightning-AI/torchmetrics#1780."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = None
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
        self.train_loss = _helpers_b.TensorStateMeanMetric()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = nn.functional.cross_entropy(self.backbone(x), y)
        self.train_loss.update(loss)
        return loss


def build() -> nn.Module:
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.randint(0, 4, (4,)))
    if i % 4 == 3:
        model.train_loss.compute()  # epoch-end compute happens eagerly, outside the region
