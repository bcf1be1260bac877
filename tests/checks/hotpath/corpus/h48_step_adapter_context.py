"""Hazard (pytorch#124717, torchtune disable_adapter): a context manager in another module flips a flag forward reads."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

from tests.checks.hotpath.corpus._lib.schedules import disable_adapter

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def __init__(self):
        super().__init__()
        self.adapter = nn.Linear(8, 8)
        self.adapter_disabled = False

    def forward(self, x):
        out = self.proj(x)
        if self.adapter_disabled:
            return out
        return out + self.adapter(x)


def build():
    return M()


def step(model, i):
    x = torch.randn(2, 8)
    with torch.no_grad():
        policy = model(x)
        with disable_adapter(model):
            reference = model(x)
    return policy - reference
