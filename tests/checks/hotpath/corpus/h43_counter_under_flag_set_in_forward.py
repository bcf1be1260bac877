"""Hazard: the guard flag is off at startup but forward turns it on."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.warm = False
        self.calls = 0

    def forward(self, x):
        if self.warm:
            self.calls += 1
        self.warm = True
        return self.proj(x)


def build():
    return M()
