"""Hazard: branching on .item() (data-dependent graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'item-branch'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x):
        y = self.proj(x)
        if y.sum().item() > 0:
            return y
        return -y


def build():
    return M()
