"""Hazard: a model converted with a float8_experimental-style `swap_linear_with_float8_linear` (delayed scaling) is
compiled whole; each Float8Linear lazily initialises its amaxes on the first forward and its post-forward flips the
Python flags `is_amax_initialized = True` / `amax_and_scale_synced = False`, while the eager
`sync_float8_amax_and_scale_history` sets `amax_and_scale_synced = True` between iterations; the second iteration
fails the guard `self._modules['w1'].is_amax_initialized == False` of the first trace and recompiles. From
meta-pytorch/float8_experimental#220 (set `amax_and_scale_synced` unconditionally: "this module mutation was causing
a graph break")."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_a import (
    swap_linear_with_float8_linear,
    sync_float8_amax_and_scale_history,
)

LABEL = "library-object"
SOURCE = "https://github.com/meta-pytorch/float8_experimental/pull/220"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class FeedForward(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.gelu(self.w1(x)))


def build() -> nn.Module:
    return swap_linear_with_float8_linear(FeedForward())


def step(model: nn.Module, i: int) -> None:
    sync_float8_amax_and_scale_history(model)  # the training loop syncs before every forward
    model(torch.randn(4, 8)).sum().backward()
