"""Clean: a forward hook registered before compile."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
FRAMES = 2
"""The hook compiles as its own frame: two first compiles, no recompile."""


def double(mod, args, out):
    return out * 2


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    m = M()
    m.register_forward_hook(double)
    return m
