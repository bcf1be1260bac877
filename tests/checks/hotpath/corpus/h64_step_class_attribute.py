"""Hazard: the loop rewrites a class attribute that forward reads through `self`."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    scale = 1

    def forward(self, x):
        return self.proj(x) * self.scale


def build():
    return M()


def step(model, i):
    M.scale = i + 1
    with torch.no_grad():
        return model(torch.randn(2, 8))
