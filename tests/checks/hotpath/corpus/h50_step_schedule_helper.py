"""Hazard: a temperature schedule applied by a helper in another module to every module that has `tau`."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

from tests.checks.hotpath.corpus._lib.schedules import set_temperature

LABEL = 'outside'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Gumbel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tau = 1.0

    def forward(self, x):
        return torch.softmax(x / self.tau, dim=-1)


class M(Proj):
    def __init__(self):
        super().__init__()
        self.gumbel = Gumbel()

    def forward(self, x):
        return self.gumbel(self.proj(x))


def build():
    return M()


def step(model, i):
    set_temperature(model, i)
    with torch.no_grad():
        return model(torch.randn(2, 8))
