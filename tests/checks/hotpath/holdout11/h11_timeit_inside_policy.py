"""Hazard: the RL policy wraps its own forward in a library `timeit("policy/forward")` context manager that reads `time.perf_counter()` and accumulates into a class-level registry; the timer calls inside a user context manager cannot be traced, so Dynamo breaks on the first call and gives up on the policy forward, which then runs eager. From pytorch/rl#3297 (compile-aware timing helpers that return a nullcontext inside a torch.compile region to avoid graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import timeit

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/rl/pull/3297"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}


class Policy(nn.Module):
    def __init__(self, obs_dim: int = 8, act_dim: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, 2 * act_dim))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        with timeit("policy/forward"):
            loc, scale = self.net(obs).chunk(2, dim=-1)
            action = loc + torch.nn.functional.softplus(scale) * torch.randn_like(loc)
        return action.tanh()


def build() -> nn.Module:
    timeit.erase()
    return Policy()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
