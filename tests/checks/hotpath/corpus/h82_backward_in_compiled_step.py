"""Hazard: the module's compiled forward runs the whole training step, backward included."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "graph-break"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 3, "graph_breaks": 1}}  # measured on the H100 machine
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(Proj):
    def forward(self, x):
        loss = self.proj(x).pow(2).mean()
        loss.backward()
        return loss.detach()


def build():
    return M()


def step(model, i):
    return model(torch.randn(2, 8))
