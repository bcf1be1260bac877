"""Clean: the same call counter kept in a registered buffer and advanced in place. From pytorch/pytorch#115711 (the suggested tensor form)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/115711"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(8, 8)
        self.register_buffer("step", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 1
        self.step.add_(1)
        return self.layer(x)


def build() -> nn.Module:
    return MyModule()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
