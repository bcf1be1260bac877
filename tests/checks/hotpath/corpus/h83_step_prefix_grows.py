"""Hazard: the decoding loop feeds a prefix one token longer every step (a new input size each call)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "outside"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(64, 8)
        self.proj = nn.Linear(8, 8)

    def forward(self, tokens):
        return self.proj(self.embed(tokens)).mean(1)


def build():
    return M()


def step(model, i):
    tokens = torch.randint(0, 64, (2, 32), generator=torch.Generator().manual_seed(i))
    with torch.no_grad():
        return model(tokens[:, : 4 + i])
