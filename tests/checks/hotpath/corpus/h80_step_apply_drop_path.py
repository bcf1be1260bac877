"""Hazard: the loop sets a stochastic-depth rate on every block through model.apply and a lambda."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "outside"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
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
    rate = 0.02 * i
    model.apply(lambda m: setattr(m, "drop_path", rate) if isinstance(m, Block) else None)
    with torch.no_grad():
        return model(torch.randn(2, 8))
