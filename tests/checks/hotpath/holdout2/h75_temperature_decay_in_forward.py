"""Hazard: forward decays a Python float temperature on the module each call (`self.temperature *= 0.99`). From pytorch/pytorch#115711: nn.Module int/float attributes caused re-compile."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/115711"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Sampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.temperature = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.proj(x) / self.temperature
        self.temperature *= 0.99
        return logits.softmax(-1)


def build() -> nn.Module:
    return Sampler()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
