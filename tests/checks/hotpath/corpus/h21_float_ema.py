"""Hazard (latent): a float attribute updated every call."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'float'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
LATENT = "a float specializes, and recompiles per value, under specialize_float=True or as Dropout.p"
"""Why a label holds although no recorded torch misbehaves with the default config."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.ema = 1.0

    def forward(self, x):
        self.ema = 0.9 * self.ema + 0.1
        return self.proj(x) * self.ema


def build():
    return M()
