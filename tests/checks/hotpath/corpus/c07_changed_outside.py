"""Clean: a counter updated only outside the hot path (by the engine), never read there."""
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
        self.served = 0

    def mark_served(self):
        self.served += 1

    def forward(self, x):
        return self.proj(x)


def build():
    return M()


def step(model, i):
    with torch.no_grad():
        out = model(torch.randn(2, 8))
    model.mark_served()
    return out
