"""Clean: the same filter step indexes its transition matrices with a 0-d tensor the loop passes. From pytorch/pytorch#99091 (t as a tensor input)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/99091"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class KalmanStep(nn.Module):
    def __init__(self, n_steps: int = 8) -> None:
        super().__init__()
        self.Fs = nn.Parameter(torch.randn(n_steps, 8, 8) * 0.1)

    def forward(self, mu: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        F = torch.index_select(self.Fs, 0, t.reshape(1))[0]
        return mu @ F.T


def build() -> nn.Module:
    return KalmanStep()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.tensor(i))
