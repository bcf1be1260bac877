"""Hazard: forward lazily initialises state on its first call and flips a Python flag on self. From pytorch/pytorch#171488: global dict initialization cause recompilation (the lazy-initialisation pattern of einops)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/pytorch/issues/171488"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self._initialized = False
        self.norm_scale = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._initialized:
            self.norm_scale = 8 ** -0.5
            self._initialized = True
        return self.linear(x) * self.norm_scale


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
