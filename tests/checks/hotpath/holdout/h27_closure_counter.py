"""Hazard: forward calls a closure that increments a nonlocal counter and uses it. From pytorch/pytorch#93748: Support for inline with __closure__ (functions updating nonlocal variables)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/pytorch/pytorch/issues/93748"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}


def make_observer():
    counter = 0

    def observe(x: torch.Tensor) -> torch.Tensor:
        nonlocal counter
        counter += 1
        return x * (1.0 + 1.0 / counter)

    return observe


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.observe = make_observer()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.observe(self.linear(x))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
