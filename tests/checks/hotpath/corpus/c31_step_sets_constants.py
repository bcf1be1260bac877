"""Clean: the loop sets the same constants before every call (eval mode, a flag already on)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
        self.use_bias = True

    def forward(self, x):
        y = self.drop(self.proj(x))
        return y + 1 if self.use_bias else y


def build():
    return M()


def step(model, i):
    model.eval()
    model.use_bias = True
    with torch.no_grad():
        return model(torch.randn(2, 8))
