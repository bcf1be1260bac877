"""Hazard: the counter lives in a submodule called by the region."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 2)
        self.overflow_total = 0

    def forward(self, x):
        choice = self.gate(x).argmax(-1)
        self.overflow_total += 1
        return choice


class M(Proj):
    def __init__(self):
        super().__init__()
        self.router = Router()

    def forward(self, x):
        return self.proj(x) * self.router(x).unsqueeze(-1)


def build():
    return M()
