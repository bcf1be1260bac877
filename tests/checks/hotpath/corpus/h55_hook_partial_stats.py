"""Hazard: a `functools.partial` forward hook counts calls in the dict it was given."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

import functools

LABEL = 'counter'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

STATS = {"proj": 0}


def record(stats, name, module, args, out):
    stats[name] += 1
    return out


class M(Proj):
    def forward(self, x):
        return self.proj(x)


def build():
    m = M()
    m.proj.register_forward_hook(functools.partial(record, STATS, "proj"))
    return m
