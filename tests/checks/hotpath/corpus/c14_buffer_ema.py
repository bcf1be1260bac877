"""Clean: an EMA kept in a 0-d buffer updated in place."""
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
        self.register_buffer("ema", torch.ones(()), persistent=False)

    def forward(self, x):
        y = self.proj(x)
        with torch.no_grad():
            self.ema.mul_(0.9).add_(0.1 * y.mean())
        return y


def build():
    return M()
