"""Hazard: a counter kept as a class attribute."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 2, "graph_breaks": 1}, "2.12": {"compiles_over_8_steps": 9, "graph_breaks": 8}}  # 2.12 measured on the CPU-only machine (2.12.1+cu130)
"""Measured per torch minor where it differs from 2.13 (2.11 on the GPU machines, the others on the CPU-only one); verified by the same test."""

class M(Proj):
    calls = 0

    def forward(self, x):
        type(self).calls += 1
        return self.proj(x)


def build():
    return M()
