"""Clean: a forward hook on the compiled module itself counts calls; it runs as a frame of its own with no tensor
work, so Dynamo traces no graph for it and guards on nothing (the forward frame compiles once)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.corpus._base import Proj, step  # noqa: F401

LABEL = None
"""Ground truth: the hazard kind, or None for a clean look-alike."""
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
"""Measured under real torch.compile (backend eager, 8 steps); verified by tests/checks/hotpath/test_corpus.py."""
FRAMES = 2


def count_call(module: nn.Module, args: tuple, out: torch.Tensor) -> None:
    module.served = module.served + 1


class M(Proj):
    def __init__(self) -> None:
        super().__init__()
        self.served = 0

    def forward(self, x):
        return self.proj(x)


def build():
    model = M()
    model.register_forward_hook(count_call)
    return model
