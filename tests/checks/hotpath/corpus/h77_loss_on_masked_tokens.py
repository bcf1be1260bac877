"""Hazard: the loss reads the logits of unpadded tokens through a boolean mask (data-dependent shape)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "graph-break"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(Proj):
    def forward(self, x):
        logits = self.proj(x)
        kept = logits[logits.abs() > 0.1]
        return kept.pow(2).mean()


def build():
    return M()
