"""Clean: forward refreshes one entry of a dict under a constant key (the keys never change after build)."""
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
        self.latest = {"amax": torch.zeros(())}

    def forward(self, x):
        y = self.proj(x)
        self.latest["amax"] = y.detach().amax()
        return y


def build():
    return M()
