"""Hazard: float8 training with delayed scaling: each `Float8Linear` lazily initialises its input amax inside its own
forward and then flips `self.is_amax_initialized = True`, so the first compiled call runs with the flag False and
every later call fails the guard on it and compiles again. From pytorch/ao#563 (fullgraph compile of a
`nn.Sequential` of delayed-scaling `Float8Linear` layers breaks on the module-attribute mutation done by the
amax-init / pre-post-forward bookkeeping)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import swap_linear_with_float8_linear

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/ao/issues/563"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class FeedForward(nn.Module):
    """A torchtitan-style MLP block; its Linear layers are swapped for float8 ones after construction."""

    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(dim, hidden), nn.Sigmoid(), nn.Linear(hidden, dim), nn.Sigmoid())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.layers(x)


def build() -> nn.Module:
    model = FeedForward()
    return swap_linear_with_float8_linear(model, init_in_forward=True)


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    model(x).sum().backward()
