"""Hazard: a torchrl-style "safe" policy registers a forward hook that checks the action against its spec with `(val >= low).all() and (val <= high).all()`; the Python `and`/`bool` on tensors inside the hook is data-dependent, so Dynamo graph-breaks in the hook on every call of the compiled policy. From pytorch/pytorch#140394 (graph-break log from torchrl `_forward_hook_safe_action` / `spec.is_in`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_a import BoundedSpec, forward_hook_safe_action

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/140394"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 4}


class SafePolicy(nn.Module):
    def __init__(self, obs_dim: int = 8, act_dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, obs_dim), nn.Tanh(), nn.Linear(obs_dim, act_dim))
        self.action_spec = BoundedSpec(-1.0, 1.0, (act_dim,))
        self.register_forward_hook(forward_hook_safe_action)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(obs)


def build() -> nn.Module:
    return SafePolicy()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8) * 3)
