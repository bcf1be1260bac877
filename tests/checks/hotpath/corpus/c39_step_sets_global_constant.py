"""Clean: the loop writes the same constant to a module global of the model's module every step."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

import sys

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

SCALE = 2


class M(Proj):
    def forward(self, x):
        return self.proj(x) * SCALE


def build():
    return M()


def step(model, i):
    sys.modules[__name__].SCALE = 2
    with torch.no_grad():
        return model(torch.randn(2, 8))
