"""Clean: the environment is read once in __init__."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401
import os

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.debug = os.environ.get("CORPUS_C20_DEBUG") == "1"

    def forward(self, x):
        y = self.proj(x)
        return y.clone() if self.debug else y


def build():
    return M()
