"""Hazard: forward uses a tensor comparison directly as an `if` condition. From pytorch/pytorch#119186: No logging of compiled code (a graph break from a data-dependent conditional)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/119186"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        if h.sum() < 0:
            h = -h
        return h


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
