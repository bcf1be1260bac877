"""Clean: the loop sets the drop-path rate through model.apply only before the first step."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class Block(Proj):
    def __init__(self):
        super().__init__()
        self.drop_path = 0.0

    def forward(self, x):
        if self.drop_path > 0:
            return x + self.proj(x) * (1 - self.drop_path)
        return x + self.proj(x)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x)


def build():
    return M()


def step(model, i):
    if i == 0:
        model.apply(lambda m: setattr(m, "drop_path", 0.1) if isinstance(m, Block) else None)
    with torch.no_grad():
        return model(torch.randn(2, 8))
