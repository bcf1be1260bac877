"""Hazard: a helper called from forward appends to its mutable default list."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'container'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}

def remember(x, history=[]):
    history.append(x.shape[0])
    return x


class M(Proj):
    def forward(self, x):
        return self.proj(remember(x))


def build():
    return M()
