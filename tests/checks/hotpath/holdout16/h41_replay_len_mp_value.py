"""Hazard: torchrl's TensorStorage keeps its fill level in a `multiprocessing.Value` (`_len` is a property over `mp.Value("i")` so collector workers can share it); a policy that writes its transitions into the replay buffer from inside the compiled forward reads and writes that value on every call, and Dynamo cannot trace the SemLock behind it, so every call breaks the graph. From pytorch/rl#2504 (compiling `ReplayBuffer.extend`: "the root cause really is the `mp.Value` after all", `Graph break due to unsupported builtin None.SemLock.acquire`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import RoundRobinWriter, TensorStorage

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/rl/pull/2504"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 5}


class CollectingActor(nn.Module):
    """Actor that records (obs, action) pairs into a replay writer as it acts, like a compiled collector policy."""

    def __init__(self, obs_dim: int = 6, act_dim: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, act_dim))
        self.writer = RoundRobinWriter(TensorStorage(max_size=64, dim=obs_dim + act_dim))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        action = self.net(obs)
        self.writer.extend(torch.cat([obs, action.detach()], dim=-1))
        return action


def build() -> nn.Module:
    return CollectingActor()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 6))
