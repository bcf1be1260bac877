"""Hazard: the loop switches one layer on and off by index (`model.layers[0].active`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Layer(Proj):
    def __init__(self):
        super().__init__()
        self.active = True

    def forward(self, x):
        return self.proj(x) if self.active else x


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build():
    return M()


def step(model, i):
    model.layers[0].active = i % 2 == 0
    with torch.no_grad():
        return model(torch.randn(2, 8))
