"""Hazard: forward counts its calls in a Python int on the module (`self.step += 1`) before the layer. From pytorch/pytorch#115711: [torch.compile] nn.Module int/float attributes caused re-compile."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/pytorch/pytorch/issues/115711"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(8, 8)
        self.step = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 1
        self.step += 1
        return self.layer(x)


def build() -> nn.Module:
    return MyModule()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
