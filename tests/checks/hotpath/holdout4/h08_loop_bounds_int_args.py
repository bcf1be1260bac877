"""Hazard: the window start index from the caller's loop is a Python int that bounds a `range()` in forward, so every new `start` specialises the unrolled loop and recompiles, from pytorch/pytorch#114293 (Recompilation triggered at each step of the loop involving array indexing)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/114293"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class WindowAccumulator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encode = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, start: int, end: int) -> torch.Tensor:
        h = self.encode(x)
        acc = h[start]
        for t in range(start + 1, end):
            acc = acc + h[t]
        return acc


def build() -> nn.Module:
    return WindowAccumulator()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(16, 8), i, 10)
