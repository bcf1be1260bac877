"""Hazard: a scheduler object advanced by the loop sets a float temperature read in forward."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Cosine:
    def __init__(self):
        self.t = 0

    def advance(self):
        self.t += 1

    def value(self):
        return 1.0 / (1 + self.t)


SCHED = Cosine()


class M(Proj):
    def __init__(self):
        super().__init__()
        self.temperature = 1.0

    def forward(self, x):
        return self.proj(x) / self.temperature


def build():
    return M()


def step(model, i):
    SCHED.advance()
    model.temperature = SCHED.value()
    with torch.no_grad():
        return model(torch.randn(2, 8))
