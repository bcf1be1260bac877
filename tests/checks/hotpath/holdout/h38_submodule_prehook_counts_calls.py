"""Hazard: a forward pre-hook on a submodule inside the compiled region bumps a Python call counter on that submodule (to sub-sample activation statistics every N calls). From pytorch/pytorch#170110: Submodule forward hook with kwargs cause recompilation."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "pre-hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/170110"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


def count_forward(module: nn.Module, args: tuple) -> None:
    module.n_forward = getattr(module, "n_forward", 0) + 1


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.mlp = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.relu(self.attn(x)))


def build() -> nn.Module:
    block = Block()
    block.attn.register_forward_pre_hook(count_forward)
    return block


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
