"""Clean: the same collecting actor writing into its replay storage from inside the compiled forward, but the storage keeps its write cursor and fill level as 0-d tensors updated in place (`copy_`), so neither a multiprocessing lock nor a changing Python int is read by the compiled code; one graph serves every call. The tensor-state variant of the compilable storage discussed in pytorch/rl#2529 (compiled `ReplayBuffer.extend` without graph breaks or per-call recompiles)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import TensorCursorStorage

LABEL = None
SOURCE = "https://github.com/pytorch/rl/pull/2529"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class CollectingActor(nn.Module):
    """Actor that records (obs, action) pairs into a tensor-cursor replay storage as it acts."""

    def __init__(self, obs_dim: int = 6, act_dim: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, act_dim))
        self.storage = TensorCursorStorage(max_size=64, dim=obs_dim + act_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        action = self.net(obs)
        self.storage.set(torch.cat([obs, action.detach()], dim=-1))
        return action


def build() -> nn.Module:
    return CollectingActor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 6))
