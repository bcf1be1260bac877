"""Hazard (Lightning-AI/torchmetrics#1780, meta-pytorch/torchrec#4338): a real torchmetrics metric updated in forward
counts its updates in the Python int `_update_count`."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

REQUIRES = "torchmetrics"
"""Optional package the case needs (skipped where it is not installed)."""
LABEL = "counter"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 3}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(Proj):
    def __init__(self):
        super().__init__()
        from torchmetrics import MeanMetric

        self.mean = MeanMetric()

    def forward(self, x):
        y = self.proj(x)
        self.mean.update(y)
        return y


def build():
    return M()
