"""Clean: the loop keeps its counters and schedules on the model, but forward never reads them."""
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
        self.seen_steps = 0
        self.lr_now = 0.1

    def forward(self, x):
        return self.proj(x)


def build():
    return M()


def step(model, i):
    model.seen_steps += 1
    model.lr_now = 0.1 / (1 + i)
    with torch.no_grad():
        return model(torch.randn(2, 8))
