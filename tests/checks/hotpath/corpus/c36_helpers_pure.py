"""Clean: a helper in another module that only computes, and a library stat kept in a buffer."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

from tests.checks.hotpath.corpus._lib.metriclib import PureStat
from tests.checks.hotpath.corpus._lib.stats import scale_of

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.stat = PureStat()

    def forward(self, x):
        y = scale_of(self.proj(x))
        self.stat.update(y)
        return y


def build():
    return M()
