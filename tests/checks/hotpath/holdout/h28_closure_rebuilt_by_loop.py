"""Hazard: the loop rebuilds the activation closure with a new slope every step (annealed leaky slope), and forward calls it. From pytorch/pytorch#172382: [dynamo] Include closure cell name in recompilation reasons (guard `cl.__closure__[1].cell_contents == 1`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/172382"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


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
    model.act = make_activation(0.2 / (i + 1))
    with torch.no_grad():
        model(torch.randn(4, 8))
