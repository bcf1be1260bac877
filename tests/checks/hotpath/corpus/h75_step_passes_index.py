"""Hazard: the loop passes a Python int computed from its step number into the compiled forward."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x, t):
        return self.proj(x) * (1 + t % 3)


def build():
    return M()


def step(model, i):
    warm = i * 2
    with torch.no_grad():
        return model(torch.randn(2, 8), warm)
