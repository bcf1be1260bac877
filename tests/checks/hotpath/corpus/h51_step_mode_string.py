"""Hazard: the loop alternates a string decoding mode that forward branches on."""
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
        self.mode = "greedy"

    def forward(self, x):
        y = self.proj(x)
        if self.mode == "greedy":
            return y.argmax(-1)
        return torch.softmax(y, -1).argmax(-1)


def build():
    return M()


def step(model, i):
    model.mode = "greedy" if i % 2 == 0 else "sample"
    with torch.no_grad():
        return model(torch.randn(2, 8))
