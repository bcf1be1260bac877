"""Hazard: the MLP layers look up their activation through a layer-config module's global (`get_act_fn()`) at every forward, and a callback in the loop flips the process-wide switch (`set_exportable`) between calls; the compiled forward guards on the identity of the global function, so the first flip recompiles and the two variants then alternate in the cache (the report's concern was the opposite failure: an unguarded global function silently keeping the old one). From pytorch/pytorch#109203 ([dynamo] guard for global fn)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9 import _helpers_a as layer_config

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/pull/109203"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Mlp(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        act = layer_config.get_act_fn()
        return self.fc2(act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = Mlp(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


def build() -> nn.Module:
    layer_config.set_exportable(False)
    return Block()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
    # an export-check callback flips the process-wide layer config after every step
    layer_config.set_exportable(i % 2 == 0)
