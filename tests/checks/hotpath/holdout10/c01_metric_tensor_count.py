"""Clean: the same ranking model updating its metric inside the compiled forward, but the metric keeps its update
count (and all its state) in buffers, so nothing Dynamo guards on changes between steps; the fix direction for
meta-pytorch/torchrec#4338."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_a import TensorCountMetric

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4338"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RankingModelWithMetrics(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.over_arch = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
        self.mse = TensorCountMetric()

    def forward(self, dense: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.over_arch(dense).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        value = self.mse(torch.sigmoid(logits), labels)
        return loss, value


def build() -> nn.Module:
    return RankingModelWithMetrics()


def step(model: nn.Module, i: int) -> None:
    dense = torch.randn(4, 8)
    labels = (torch.arange(4) % 2).float()
    loss, _ = model(dense, labels)
    loss.backward()
