"""Hazard: a Kalman-filter step compiled as a module receives the Python time index t from the loop and picks that step's transition matrix. From pytorch/pytorch#99091: Recompilation then hang when dynamic=True."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/99091"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class KalmanStep(nn.Module):
    def __init__(self, n_steps: int = 8) -> None:
        super().__init__()
        self.Fs = nn.Parameter(torch.randn(n_steps, 8, 8) * 0.1)

    def forward(self, mu: torch.Tensor, t: int) -> torch.Tensor:
        F = self.Fs[t]
        return mu @ F.T


def build() -> nn.Module:
    return KalmanStep()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), i)
