"""Hazard: a pre-hook on the compiled module itself counts calls and scales the input by the count; with tensor work
the hook's own frame is compiled and guards on the count, so it recompiles on every call."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = "counter"
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""


def warm_scale(module: nn.Module, args: tuple) -> tuple:
    module.seen += 1
    return (args[0] * min(module.seen, 4),)


class M(Proj):
    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def forward(self, x):
        return self.proj(x)


def build():
    model = M()
    model.register_forward_pre_hook(warm_scale)
    return model
