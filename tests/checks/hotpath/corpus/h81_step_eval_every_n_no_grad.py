"""Hazard: the loop trains with grad and evaluates every fourth step under no_grad (one graph per grad mode)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "outside"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(Proj):
    def forward(self, x):
        return self.proj(x).relu()


def build():
    return M()


def evaluate(model):
    with torch.no_grad():
        return model(torch.randn(2, 8))


def step(model, i):
    if i % 4 == 3:
        return evaluate(model)
    model(torch.randn(2, 8)).sum().backward()
