"""Hazard: `float()` of a tensor buffer compared in a condition."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'item-branch'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(()), persistent=False)

    def forward(self, x):
        y = self.proj(x)
        if float(self.scale) > 0.5:
            y = y * 2
        return y


def build():
    return M()
