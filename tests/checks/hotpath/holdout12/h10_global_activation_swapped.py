"""Hazard: the MLP calls a module-level `activation_fn` from a helper module, and the training script swaps that global (`set_activation("silu")`) part-way through the run; on torch 2.13 the compiled MLP guards on the global function object, so each swap recompiles (the report found no guard, so the old activation silently stayed). From pytorch/pytorch#108898 (Missing guard on global function)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12 import _helpers_a

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/108898"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(_helpers_a.activation_fn(self.fc1(x)))


def build() -> nn.Module:
    _helpers_a.set_activation("gelu")
    return MLP()


def step(model: nn.Module, i: int) -> None:
    if i in (3, 6):
        _helpers_a.set_activation("silu" if i == 3 else "relu")
    model(torch.randn(4, 8)).sum().backward()
