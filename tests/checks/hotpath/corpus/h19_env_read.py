"""Hazard: an environment variable read in forward, changed between steps."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401
import os

LABEL = 'env'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x):
        if os.environ.get("CORPUS_H19_SCALE") == "1":
            return self.proj(x) * 2
        return self.proj(x)


def build():
    return M()


def step(model, i):
    os.environ["CORPUS_H19_SCALE"] = str(i % 2)
    with torch.no_grad():
        return model(torch.randn(2, 8))
