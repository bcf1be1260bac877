"""Hazard (pytorch#110803): the loop alternates train and eval on a model whose Dropout reads `training`."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.proj(x))


def build():
    return M()


def step(model, i):
    x = torch.randn(2, 8)
    model.train()
    loss = model(x).sum()
    model.eval()
    with torch.no_grad():
        val = model(x).sum()
    return loss.detach() + val
