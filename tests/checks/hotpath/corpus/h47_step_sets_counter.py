"""Hazard (pytorch#128319, set from the loop): the engine writes its step counter onto the model; forward reads it."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.global_step = 0

    def forward(self, x):
        warm = 0.5 if self.global_step < 100 else 1.0
        return self.proj(x) * warm


def build():
    return M()


def step(model, i):
    model.global_step = i
    with torch.no_grad():
        return model(torch.randn(2, 8))
