"""Hazard: a nonlocal counter in a closure called from forward."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.14": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)
"""Measured per torch minor where it differs from 2.13 (2.11 on the GPU machines, the others on the CPU-only one); verified by the same test."""

def make_bump():
    n = 0

    def bump():
        nonlocal n
        n += 1
        return n

    return bump


class M(Proj):
    def __init__(self):
        super().__init__()
        self.bump = make_bump()

    def forward(self, x):
        self.bump()
        return self.proj(x)


def build():
    return M()
