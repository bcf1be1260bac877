"""Hazard (pytorch#113333): a helper object held by the model increments its count through its own getter."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'assigned'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Counter:
    def __init__(self):
        self.count = 0

    def val(self):
        return self.count

    def incr(self):
        self.count = self.val() + 1


class M(Proj):
    def __init__(self):
        super().__init__()
        self.counter = Counter()

    def forward(self, x):
        self.counter.incr()
        return self.proj(x)


def build():
    return M()
