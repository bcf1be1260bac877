"""Hazard: a debug `print` inside the function handed to `torch.utils.checkpoint` is a graph break inside the activation-checkpoint region, and Dynamo gives up on the whole block (forward and checkpointed function run eager), from pytorch/pytorch#139989 (Support AC with graph break)."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/139989"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class MLPBlock(nn.Module):
    def __init__(self, debug: bool = True) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)
        self.debug = debug

    def _mlp(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc1(self.norm(x)))
        if self.debug:
            print(f"mlp activation rms {h.pow(2).mean().sqrt()}")
        return self.fc2(h)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + checkpoint(self._mlp, x, use_reentrant=False)


def build() -> nn.Module:
    return MLPBlock()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
