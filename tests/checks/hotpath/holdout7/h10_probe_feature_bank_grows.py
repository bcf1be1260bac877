"""Hazard: a research ViT stashes each block's output into a module-level feature bank (`stash_features`, a list in
the repo's probing utils) from inside the compiled forward, and the training loop only reads the bank at the end of
the epoch. Dynamo guards on the list's length, so every step starts with a longer list and recompiles. From
pytorch/pytorch#93724 (don't over-specialize on list append/clear: appending to a global list recompiles on every
call)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_a as probing

LABEL = "container"
SOURCE = "https://github.com/pytorch/pytorch/issues/93724"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class ProbedViT(nn.Module):
    def __init__(self, depth: int = 2, dim: int = 8, probe_blocks: tuple = (1,)) -> None:
        super().__init__()
        self.patch_embed = nn.Linear(4, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 3)
        self.probe_blocks = probe_blocks

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x)
        for idx, blk in enumerate(self.blocks):
            x = blk(x)
            if idx in self.probe_blocks:
                probing.stash_features(f"blocks.{idx}", x.mean(dim=1))
        return self.head(x.mean(dim=1))


def build() -> nn.Module:
    probing.FEATURE_BANK.clear()
    return ProbedViT()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 5, 4)).logsumexp(-1).mean().backward()
    if i == 7:  # end of the (short) epoch: fit the linear probe on everything collected
        probing.consume_features()
