"""Hazard: a Shampoo-with-Adam-grafting optimizer keeps `state["step"]` as a Python int in its per-block state dict, increments it inside the compiled step and uses it for bias correction and the precondition-frequency test, so every step fails the guard on the int and recompiles. From cloneofsimo/zeroshampoo#1 (torch compile cannot handle Python ints that change)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import ZeroShampooLite

LABEL = "library-object"
SOURCE = "https://github.com/cloneofsimo/zeroshampoo/issues/1"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class ShampooTrainStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8, bias=False))
        self.optimizer = ZeroShampooLite(self.mlp.parameters(), lr=1e-3)

    def forward(self) -> None:
        self.optimizer.step()


def build() -> nn.Module:
    return ShampooTrainStep()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    loss = model.mlp(x).pow(2).mean()
    loss.backward()
    model()
    model.optimizer.zero_grad()
