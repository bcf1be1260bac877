"""Hazard: forward pulls a count out of a tensor with .item() and slices by it (no if: still a graph break)."""
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
        keep = (x[:, 0] > 0).sum().item()
        return self.proj(x)[: keep + 1]


def build():
    return M()
