"""Hazard: a forward hook registered after compile (ignored by the compiled graph)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'hook'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    return M()


def step(model, i):
    if i == 2:
        model.register_forward_hook(lambda mod, args, out: out * 2)
    with torch.no_grad():
        return model(torch.randn(2, 8))
