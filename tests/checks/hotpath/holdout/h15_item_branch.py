"""Hazard: forward pulls a scalar out with .item() and branches on it. From pytorch/pytorch#158642: PyTorch Dynamo Error Report: Tensor.item() Operation Causes Graph Compilation Interruption."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/158642"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        if h.abs().max().item() > 10.0:  # overflow guard
            h = h / 10.0
        return torch.relu(h)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
