"""Hazard: a stochastic-depth block decides with Python's random.random() whether to skip its branch (single block, no loop around it). From pytorch/pytorch#145446: [dynamo] fix graph break random.random."""
from __future__ import annotations

import random

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/145446"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 1}


class DropPathBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.branch = nn.Linear(8, 8)
        self.drop_prob = 0.3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.branch(x)
        if self.training and random.random() < self.drop_prob:
            return x
        return x + h


def build() -> nn.Module:
    random.seed(0)
    return DropPathBlock().train()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():  # train mode (drop path active), no backward needed
        model(torch.randn(4, 8))
