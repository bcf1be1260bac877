"""Hazard: forward times itself with time.time(). From pytorch/pytorch#137068: UserWarning: Graph break due to unsupported builtin time.time."""
from __future__ import annotations

import time

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/137068"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 3}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.last_forward_s = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        start = time.time()
        out = torch.relu(self.linear(x))
        self.last_forward_s = time.time() - start
        return out


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
