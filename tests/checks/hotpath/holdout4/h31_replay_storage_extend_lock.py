"""Hazard: the compiled rollout module writes each batch into a replay storage (another module) that guards its writes with a multiprocessing lock; Dynamo cannot enter the `Lock` context manager, so every forward graph-breaks inside the storage even though its write cursor is a tensor buffer. From pytorch/rl#2501: Support compiling `ReplayBuffer.extend` without recompile (graph break on `SemLock.acquire`, recompiles on the first calls)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/rl/issues/2501"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class RolloutWriter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.policy = nn.Linear(8, 8)
        self.storage = _helpers_b.LazyTensorStorage(max_size=32, width=8)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        action = torch.tanh(self.policy(obs))
        self.storage.extend(action)
        return action


def build() -> nn.Module:
    return RolloutWriter()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
