"""Hazard: the loop anneals a LeakyReLU's negative_slope inside the compiled model every step (torch's forward reads it)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.act = nn.LeakyReLU(0.3)

    def forward(self, x):
        return self.act(self.proj(x))


def build():
    return M()


def step(model, i):
    model.act.negative_slope = 0.3 / (1 + i)
    with torch.no_grad():
        return model(torch.randn(2, 8))
