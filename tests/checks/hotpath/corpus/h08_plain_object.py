"""Hazard: an int counter on a plain Python object held by the module."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Stats:
    def __init__(self):
        self.count = 0


class M(Proj):
    def __init__(self):
        super().__init__()
        self.state = Stats()

    def forward(self, x):
        self.state.count += 1
        return self.proj(x)


def build():
    return M()
