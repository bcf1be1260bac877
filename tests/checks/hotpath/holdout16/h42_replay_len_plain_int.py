"""Hazard: the fix for the mp.Value graph break, torchrl's `compilable=True` storage, keeps the fill level as a plain Python int (`self._len_value = value`); the compiled collector policy reads `len(storage)` to place each batch and writes the new length back, so the int on the storage object changes on every call while the buffer fills and each new value fails the guard until Dynamo turns it dynamic. From pytorch/rl#2529 (compiled `ReplayBuffer.extend/sample` with `LazyTensorStorage`, "avoid using multiprocessing features"; the test in #2504 still counted recompiles on the first calls)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import RoundRobinWriter, TensorStorage

LABEL = "counter"
SOURCE = "https://github.com/pytorch/rl/pull/2529"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class CollectingActor(nn.Module):
    """Actor that records (obs, action) pairs into a compilable replay storage as it acts."""

    def __init__(self, obs_dim: int = 6, act_dim: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, act_dim))
        self.writer = RoundRobinWriter(TensorStorage(max_size=64, dim=obs_dim + act_dim, compilable=True))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        action = self.net(obs)
        self.writer.extend(torch.cat([obs, action.detach()], dim=-1))
        return action


def build() -> nn.Module:
    return CollectingActor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 6))
