"""Hazard: forward keeps a Python float exponential moving average on self and uses it to scale the output. From pytorch/pytorch#171320: torch.compile: scalar arithmetic causes unlimited recompiles."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/171320"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.ema_scale = 1.0
        self.decay = 0.9

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.ema_scale = self.decay * self.ema_scale + (1.0 - self.decay) * 2.0
        return self.linear(x) * self.ema_scale


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
