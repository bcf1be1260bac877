"""Clean: the same float8_experimental-style delayed-scaling model converted with lazy amax initialisation turned off
(the library's `enable_amax_init = False` switch, which float8 users set for compile): `is_amax_initialized` is True
from construction, and the post-forward's `amax_and_scale_synced = False` is always undone by the eager sync before
the next forward, so every call enters the compiled forward with the same flag values and the model compiles once.
From meta-pytorch/float8_experimental#220 (set `amax_and_scale_synced` unconditionally)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_a import (
    swap_linear_with_float8_linear,
    sync_float8_amax_and_scale_history,
)

LABEL = None
SOURCE = "https://github.com/meta-pytorch/float8_experimental/pull/220"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class FeedForward(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.gelu(self.w1(x)))


def build() -> nn.Module:
    return swap_linear_with_float8_linear(FeedForward(), enable_amax_init=False)


def step(model: nn.Module, i: int) -> None:
    sync_float8_amax_and_scale_history(model)  # the training loop syncs before every forward
    model(torch.randn(4, 8)).sum().backward()
