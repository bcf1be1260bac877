"""Hazard: a head picked with getattr and an f-string; the task changes per step."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'dynamic-getattr'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_a = nn.Linear(8, 8)
        self.head_b = nn.Linear(8, 8)
        self.task = "a"

    def forward(self, x):
        return getattr(self, f"head_{self.task}")(x)


def build():
    return M()


def step(model, i):
    model.task = "ab"[i % 2]
    with torch.no_grad():
        return model(torch.randn(2, 8))
