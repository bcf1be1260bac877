"""Clean: 10 layers read their Python layer index, but the model is compiled whole: one graph, constants."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

REGION = ""

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Layer(Proj):
    def __init__(self, idx):
        super().__init__()
        self.layer_idx = idx

    def forward(self, x):
        return self.proj(x) * (self.layer_idx + 1)


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer(i) for i in range(10))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build():
    return M()
