"""Clean (audit a06): a high-water mark `max(self.n, seq)` that stops changing (warned, not refused)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.max_seq_len_cached = 8
        self.register_buffer("cos", torch.ones(8, 8), persistent=False)

    def forward(self, x):
        seq = x.shape[1]
        self.max_seq_len_cached = max(self.max_seq_len_cached, seq)
        return x * self.cos[0, :seq]


class M(Proj):
    def __init__(self):
        super().__init__()
        self.rot = Rotary()

    def forward(self, x):
        return self.rot(self.proj(x))


def build():
    return M()
