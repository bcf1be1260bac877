"""Hazard: the attention block calls a shared `apply_rotary` utility from another module, which two frames down calls a debug-logging helper; the logger call is untraceable, so Dynamo breaks inside the nested helper, restarts, and compiles the forward, the helper and their resume frames as separate graphs. From pytorch/pytorch#124437 (graph breaks in nested functions increase compile time badly)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import apply_rotary

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/124437"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


class RotaryAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = apply_rotary(self.q(x))
        k = self.k(x)
        return self.o(torch.softmax(q @ k.t(), dim=-1) @ x)


def build() -> nn.Module:
    return RotaryAttention()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
