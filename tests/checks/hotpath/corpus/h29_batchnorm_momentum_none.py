"""Hazard: BatchNorm(momentum=None) in training mode (graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'batchnorm'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(8, momentum=None)

    def forward(self, x):
        return self.norm(self.proj(x))


def build():
    return M().train()
