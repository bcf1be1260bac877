"""Hazard: the step is a trainer's method that advances its own counter and copies it onto the model."""
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
        return self.proj(x) * (1 + self.global_step % 3)


class Trainer:
    def __init__(self):
        self.global_step = 0

    def step(self, model, i):
        self.global_step += 1
        model.global_step = self.global_step
        with torch.no_grad():
            return model(torch.randn(2, 8))


def build():
    return M()


step = Trainer().step  # noqa: F811
