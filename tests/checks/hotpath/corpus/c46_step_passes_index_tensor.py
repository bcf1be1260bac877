"""Clean: the loop passes its step number as a 0-d tensor, so the graph reads a tensor input."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x, t):
        return self.proj(x) * (1 + t % 3)


def build():
    return M()


def step(model, i):
    with torch.no_grad():
        return model(torch.randn(2, 8), torch.tensor(i * 2))
