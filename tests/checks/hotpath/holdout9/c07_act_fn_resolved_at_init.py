"""Clean: the same MLP block as h08, but (as timm layers do with `use_fused_attn()`) the activation is resolved from the layer-config module once in `__init__` and kept on the layer; the callback still flips the process-wide switch between calls, but the compiled forward never reads it, so it compiles once. Look-alike of pytorch/pytorch#109203."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9 import _helpers_a as layer_config

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/pull/109203"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Mlp(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.act = layer_config.get_act_fn()  # resolved at construction, fixed for the module's life

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


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
