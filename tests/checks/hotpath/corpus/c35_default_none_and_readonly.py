"""Clean: a `None` default replaced by a fresh list, and a default dict that is only read."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class M(Proj):
    def forward(self, x, extra=None, cfg={"scale": 2}):
        extra = [] if extra is None else extra
        extra.append(1)
        return self.proj(x) * cfg["scale"] * len(extra)


def build():
    return M()
