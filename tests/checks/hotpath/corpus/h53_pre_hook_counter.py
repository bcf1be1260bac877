"""Hazard: a forward pre-hook function counts calls on the submodule it is registered on."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

def count_calls(module, args):
    module.calls += 1


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    m = M()
    m.proj.calls = 0
    m.proj.register_forward_pre_hook(count_calls)
    return m
