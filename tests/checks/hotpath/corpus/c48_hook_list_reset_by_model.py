"""Clean: a hook appends outputs to a list on the model, and the loop calls the model's reset_taps() before every step."""
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
        self.taps = []
        self.inner.register_forward_hook(self.tap)

    def tap(self, mod, args, out):
        self.taps.append(out.detach())

    def reset_taps(self):
        self.taps = []

    def forward(self, x):
        return self.proj(self.inner(x))


def build():
    return M()


def step(model, i):
    model.reset_taps()
    with torch.no_grad():
        return model(torch.randn(2, 8))
