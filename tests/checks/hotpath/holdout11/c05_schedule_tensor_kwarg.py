"""Clean: the same schedule object and denoiser, but the loop hands the schedule value in as a 0-dim tensor, so only its shape and dtype are guarded and the forward compiles once. Look-alike of pytorch/pytorch#117496 (value of non-Tensor float argument of a compiled method)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import GeometricSchedule

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/117496"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Denoiser(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, A: torch.Tensor, B: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.proj(A + B + t)


SCHED = GeometricSchedule(start=16.0, ratio=0.5)


def build() -> nn.Module:
    SCHED.reset()
    return Denoiser()


def step(model: nn.Module, i: int) -> None:
    SCHED.b()
    Z = torch.ones(3, 8)
    with torch.no_grad():
        model(Z, Z, t=torch.tensor(SCHED.t))
