"""Hazard (audit b07): a forward hook that is a callable object counting calls."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Recorder:
    def __init__(self):
        self.count = 0

    def __call__(self, mod, args, out):
        self.count += 1
        return out


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    m = M()
    m.proj.register_forward_hook(Recorder())
    return m
