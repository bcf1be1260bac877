"""Hazard: a global read in forward, changed by the engine between steps."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

SCALE = 1


class M(Proj):
    def forward(self, x):
        return self.proj(x) * SCALE


def build():
    return M()


def step(model, i):
    global SCALE
    SCALE = i
    with torch.no_grad():
        return model(torch.randn(2, 8))
