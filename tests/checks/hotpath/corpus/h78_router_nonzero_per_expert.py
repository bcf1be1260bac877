"""Hazard: an MoE router finds each expert's tokens with nonzero (data-dependent shape). The break sits inside a
Python loop, so on torch 2.13 Dynamo skips the whole forward: it runs eager, silently (the one break counted)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "graph-break"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(8, 2)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(2))

    def forward(self, x):
        choice = self.gate(x).argmax(-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = (choice == e).nonzero(as_tuple=True)[0]
            out = out.index_add(0, idx, expert(x[idx]))
        return out


def build():
    return M()
