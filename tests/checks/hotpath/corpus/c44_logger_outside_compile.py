"""Clean: the logger call sits under `not is_compiling()`, so the traced graph never sees it."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""

import logging

log = logging.getLogger("corpus.c44")


class M(Proj):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            log.debug("eager call")
        return self.proj(x)


def build():
    return M()
