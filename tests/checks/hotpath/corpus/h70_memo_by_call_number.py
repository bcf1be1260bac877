"""Hazard: forward memoises each call's summary in a dict keyed by how many it holds (keys grow every call)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'container'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 8, "graph_breaks": 0}}  # 2.11 re-measured on the CPU-only machine, 2.11.0+cu130 (the earlier record: 7 compiles, 0 breaks)

class M(Proj):
    def __init__(self):
        super().__init__()
        self.summaries = {}

    def forward(self, x):
        y = self.proj(x)
        self.summaries[len(self.summaries)] = y.detach().amax()
        return y


def build():
    return M()
