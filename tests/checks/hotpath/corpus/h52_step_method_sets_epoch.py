"""Hazard: the loop calls a setter method of the model with its counter; forward reads the epoch."""
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
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def forward(self, x):
        return self.proj(x) * (1 + self.epoch)


def build():
    return M()


def step(model, i):
    model.set_epoch(i)
    with torch.no_grad():
        return model(torch.randn(2, 8))
