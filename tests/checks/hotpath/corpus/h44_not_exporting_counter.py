"""Hazard: `if not is_exporting():` is true under torch.compile (it is not an is_compiling() guard)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}
"""On torch 2.11 `is_exporting()` is True inside torch.compile, so the body never runs compiled there."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        if not torch.compiler.is_exporting():
            self.calls += 1
        return self.proj(x)


def build():
    return M()
