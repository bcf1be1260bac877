"""Clean: the same safe policy as h05, but its forward hook projects the action unconditionally with a clamp (the identity inside the bounds), so no Python branch on a tensor runs in the hook and the policy compiles once. Look-alike of pytorch/pytorch#140394."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_a import BoundedSpec, forward_hook_always_project

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/140394"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
FRAMES = 2  # the forward and the forward hook are compiled as two frames, each once


class SafePolicy(nn.Module):
    def __init__(self, obs_dim: int = 8, act_dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, obs_dim), nn.Tanh(), nn.Linear(obs_dim, act_dim))
        self.action_spec = BoundedSpec(-1.0, 1.0, (act_dim,))
        self.register_forward_hook(forward_hook_always_project)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def build() -> nn.Module:
    return SafePolicy()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8) * 3)
