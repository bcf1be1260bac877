"""Hazard: a stochastic-depth block decides with Python's random.random() whether to skip its branch (single block, no loop around it). From pytorch/pytorch#145446: [dynamo] fix graph break random.random."""
from __future__ import annotations

import random

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/145446"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 1}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 3, "graph_breaks": 1}, "2.15": {"compiles_over_8_steps": 3, "graph_breaks": 1}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)


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
