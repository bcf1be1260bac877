"""Clean: a real torchmetrics MeanMetric lives on the model but is updated by the loop outside the compiled forward (requires torchmetrics; measured with 1.9.0). Look-alike of Lightning-AI/torchmetrics#1780."""
from __future__ import annotations

import torch
from torch import nn

try:
    from torchmetrics import MeanMetric
except ImportError:  # optional: the behaviour test skips this case without torchmetrics
    MeanMetric = None

LABEL = None
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REQUIRES = ("torchmetrics",)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act_mean = MeanMetric()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        out = model(torch.randn(4, 8))
    model.act_mean.update(out)
