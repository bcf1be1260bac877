"""Clean: the loop writes its step into a buffer in place; forward reads the tensor."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.register_buffer("step_buf", torch.zeros(()), persistent=False)

    def forward(self, x):
        return self.proj(x) * (1 + self.step_buf)


def build():
    return M()


def step(model, i):
    model.step_buf.fill_(i)
    with torch.no_grad():
        return model(torch.randn(2, 8))
