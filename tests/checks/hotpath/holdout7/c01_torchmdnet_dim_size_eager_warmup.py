"""Clean: the same torchmd-net style head as h02, with the fix from openmm/openmm-ml#129: one eager no-grad warm-up
pass before compilation sets the cached dim_size, so the compiled forward never reaches `.item()` and the cached int
never changes afterwards (one compile, no break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7.h02_torchmdnet_lazy_dim_size import BATCH, Z, TorchMD_Net

LABEL = None
SOURCE = "https://github.com/openmm/openmm-ml/pull/129"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def build() -> nn.Module:
    model = TorchMD_Net()
    with torch.no_grad():  # warm-up on the uncompiled model, before torch.compile wraps it
        model(Z, torch.randn(6, 3), BATCH)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(Z, torch.randn(6, 3), BATCH)
