"""Clean: blocks compiled one by one store their depth but only read a scale that is the same in every block."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

REGION = "blocks.*"


class Block(Proj):
    def __init__(self, depth):
        super().__init__()
        self.depth = depth
        self.scale = 4

    def forward(self, x):
        return x + self.proj(x) / self.scale


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for d in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def build():
    return M()
