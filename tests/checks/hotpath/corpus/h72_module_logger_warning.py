"""Hazard: forward logs through the module's logger on every call (a Logger method breaks the graph)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = 'graph-break'
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

import logging

log = logging.getLogger("corpus.h72")


class M(Proj):
    def forward(self, x):
        y = self.proj(x)
        log.debug("activation scale %s", "check")
        return y


def build():
    return M()
