"""Hazard (audit b04): a dict counter indexed by a key kept on self."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.by_name = {"a": 0}
        self.key = "a"

    def forward(self, x):
        self.by_name[self.key] += 1
        return self.proj(x)


def build():
    return M()
