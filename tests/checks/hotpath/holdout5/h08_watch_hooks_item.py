"""Hazard: an experiment tracker's `watch(model)` registers forward hooks on every leaf module that log the mean activation with `.item()` into a Python history, so the compiled forward breaks at each hooked layer. From NVIDIA/makani#150 (disable wandb.watch when torch.compile is used: it causes many graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_a

LABEL = "hook"
SOURCE = "https://github.com/NVIDIA/makani/pull/150"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 6}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 6, "graph_breaks": 6}}  # measured on the H100 machine


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 16)
        self.act = nn.SiLU()
        self.decoder = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.act(self.encoder(x)))


def build() -> nn.Module:
    model = Net()
    model.run = _helpers_a.Run()  # type: ignore[attr-defined]
    _helpers_a.watch(model, model.run)  # type: ignore[arg-type]
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
