"""Clean: the loop re-installs the gating closure every step, always with the same threshold."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

def make_gate(threshold):
    return lambda y: y * (y > threshold)


class M(Proj):
    def __init__(self):
        super().__init__()
        self.gate = make_gate(0)

    def forward(self, x):
        return self.gate(self.proj(x))


def build():
    return M()


def step(model, i):
    model.gate = make_gate(0)
    with torch.no_grad():
        return model(torch.randn(2, 8))
