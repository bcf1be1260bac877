"""Hazard: forward updates a real torchmetrics MeanMetric held as a submodule (requires torchmetrics; measured with 1.9.0). From Lightning-AI/torchmetrics#1780: Using Torchmetrics with `torch.compile` in Pytorch 2.0."""
from __future__ import annotations

import torch
from torch import nn

try:
    from torchmetrics import MeanMetric
except ImportError:  # optional: the behaviour test skips this case without torchmetrics
    MeanMetric = None

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/torchmetrics/issues/1780"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 5}
REQUIRES = ("torchmetrics",)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act_mean = MeanMetric()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.linear(x))
        self.act_mean.update(out)
        return out


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
