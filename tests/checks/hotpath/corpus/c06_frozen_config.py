"""Clean: a frozen dataclass config read in forward."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401
import dataclasses

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

@dataclasses.dataclass(frozen=True)
class Config:
    scale: float = 0.5
    use_bias: bool = True


class M(Proj):
    def __init__(self):
        super().__init__()
        self.cfg = Config()

    def forward(self, x):
        y = self.proj(x) * self.cfg.scale
        return y + 1 if self.cfg.use_bias else y


def build():
    return M()
