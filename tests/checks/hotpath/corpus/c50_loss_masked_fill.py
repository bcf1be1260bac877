"""Clean: the loss zeroes padded positions with masked_fill and divides by the mask sum (static shapes)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(Proj):
    def forward(self, x):
        logits = self.proj(x)
        keep = logits.abs() > 0.1
        total = logits.pow(2).masked_fill(~keep, 0.0).sum()
        return total / keep.sum().clamp(min=1)


def build():
    return M()
