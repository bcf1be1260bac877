"""Hazard: BatchNorm with momentum=None (cumulative moving average) trained under compile reads num_batches_tracked as a Python scalar. From pytorch/pytorch#194504: [torch.compile] BatchNorm1d(momentum=None) training fails under fullgraph=True."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "batchnorm"
SOURCE = "https://github.com/pytorch/pytorch/issues/194504"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8, momentum=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.linear(x)))


def build() -> nn.Module:
    return Model().train()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
