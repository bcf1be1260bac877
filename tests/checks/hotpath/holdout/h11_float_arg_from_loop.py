"""Hazard: the loop passes a Python float that changes every step (a += 0.01) into the compiled forward, where it is combined with another scalar before touching a tensor. From pytorch/pytorch#171320: torch.compile: scalar arithmetic causes unlimited recompiles."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/171320"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, a: float, b: float) -> torch.Tensor:
        return self.linear(x) * (a * b)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), 0.01 * (i + 1), 1.0)
