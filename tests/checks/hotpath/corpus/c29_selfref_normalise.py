"""Clean (audit a08): self-assignments that normalise a value (`or` default, enum round trip)."""
from __future__ import annotations

import enum

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Mode(enum.Enum):
    A = "a"
    B = "b"


class M(Proj):
    def __init__(self):
        super().__init__()
        self.act = "gelu"
        self.mode = Mode.A

    def forward(self, x):
        self.act = self.act or "relu"
        self.mode = Mode(self.mode)
        y = self.proj(x)
        return nn.functional.gelu(y) if self.act == "gelu" else y.relu()


def build():
    return M()
