"""Clean: the activation closure is built once at construction with a fixed slope and never rebuilt. Look-alike of pytorch/pytorch#172382 (guards on closure cells)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/172382"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def make_activation(slope: float):
    def act(x: torch.Tensor) -> torch.Tensor:
        return torch.where(x > 0, x, slope * x)

    return act


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.act = make_activation(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
