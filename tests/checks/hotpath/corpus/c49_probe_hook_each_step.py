"""Clean: the loop attaches an observing hook that stores the activation in its own dict, then detaches it, every step."""
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
        self.inner = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(self.inner(x))


def build():
    return M()


def step(model, i):
    seen = {}

    def record(mod, args, out):
        seen["inner"] = out.detach()

    handle = model.inner.register_forward_hook(record)
    with torch.no_grad():
        out = model(torch.randn(2, 8))
    handle.remove()
    return out
