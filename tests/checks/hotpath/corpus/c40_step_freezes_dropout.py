"""Clean: the loop sets train mode, then puts every Dropout back in eval with `apply`, before each call."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

def freeze_dropout(m):
    if isinstance(m, nn.Dropout):
        m.eval()


class M(Proj):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.proj(x))


def build():
    return M()


def step(model, i):
    model.train()
    model.apply(freeze_dropout)
    return model(torch.randn(2, 8)).sum()
