"""Clean: BatchNorm with the default float momentum, trained under compile (num_batches_tracked is only incremented as a tensor). Look-alike of pytorch/pytorch#194504: BatchNorm1d(momentum=None) training fails under fullgraph=True."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/194504"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8, momentum=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.linear(x)))


def build() -> nn.Module:
    return Model().train()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
