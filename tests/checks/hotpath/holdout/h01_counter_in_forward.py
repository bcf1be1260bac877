"""Hazard: forward increments a Python int counter on self on every call. From pytorch/pytorch#128319: [dynamo] Recompilation on a counter-like attribute of nn module."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/pytorch/pytorch/issues/128319"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.counter = 0
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.counter += 1
        return self.linear(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
