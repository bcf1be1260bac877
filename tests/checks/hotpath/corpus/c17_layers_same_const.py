"""Clean: per-layer compile of layers sharing the same constants."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

REGION = "layers.*"


class Layer(Proj):
    def __init__(self):
        super().__init__()
        self.heads = 2

    def forward(self, x):
        return self.proj(x).view(2, self.heads, -1).flatten(1)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(10))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build():
    return M()
