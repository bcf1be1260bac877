"""Hazard: the loop alternates model.train() and model.eval() around a compiled model (validation every other step). From pytorch/pytorch#110803: Toggling model.train() causes guard failures every time."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/110803"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    if i % 2 == 0:
        model.train()
        model(torch.randn(4, 8)).sum().backward()
    else:
        model.eval()
        with torch.no_grad():
            model(torch.randn(4, 8))
