"""Hazard (an optimizer's `state['step'] += 1` in a compiled helper): a helper in another module steps a dict it is passed."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

from tests.checks.hotpath.corpus._lib.stats import advance

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.state = {"step": 0}

    def forward(self, x):
        advance(self.state)
        return self.proj(x)


def build():
    return M()
