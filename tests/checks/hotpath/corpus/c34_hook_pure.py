"""Clean: a pre-hook that casts the input and reads a constant attribute of its module."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

def cast_input(module, args):
    return (args[0] * module.in_scale,)


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    m = M()
    m.proj.in_scale = 2
    m.proj.register_forward_pre_hook(cast_input)
    return m
