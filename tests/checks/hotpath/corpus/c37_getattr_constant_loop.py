"""Clean: `getattr` over a constant tuple of names (unrolled: each name is a constant)."""
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
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)
        self.names = ("q", "k", "v")

    def forward(self, x):
        out = self.proj(x)
        for name in ("q", "k"):
            out = out + getattr(self, name)(x)
        for name in self.names:
            out = out + getattr(self, f"{name}")(x)
        return out


def build():
    return M()
