"""Hazard: forward prints a debug line on every call. From pytorch/pytorch#93486: A Simple Function Causing Graph Break."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/93486"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        print("forward: hidden shape", tuple(h.shape))
        return torch.relu(h)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
