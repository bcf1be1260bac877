"""Clean: the loop registers its logging hook in the first step, before the first compiled call."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

def log_output(module, args, out):
    return out


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    return M()


def step(model, i):
    if i == 0:
        model.proj.register_forward_hook(log_output)
    with torch.no_grad():
        return model(torch.randn(2, 8))
