"""Hazard: the loop raises the dropout probability of a submodule every step (dropout schedule). From Nerogar/OneTrainer#1162: [Bug]: Dropout probability > 0 with compiled blocks causes error."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/Nerogar/OneTrainer/issues/1162"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.drop = nn.Dropout(p=0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(self.linear(x))


def build() -> nn.Module:
    return Block().train()


def step(model: nn.Module, i: int) -> None:
    model.drop.p = min(0.5, 0.05 * i)  # linear dropout ramp
    model(torch.randn(4, 8)).sum().backward()
