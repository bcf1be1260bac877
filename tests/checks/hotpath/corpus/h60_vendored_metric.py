"""Hazard (torchmetrics#1780, torchrec#4338): a metric object of a library updated in forward counts updates in a Python int."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

from tests.checks.hotpath.corpus._lib.metriclib import MeanValue

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.mean = MeanValue()

    def forward(self, x):
        y = self.proj(x)
        self.mean.update(y)
        return y


def build():
    return M()
