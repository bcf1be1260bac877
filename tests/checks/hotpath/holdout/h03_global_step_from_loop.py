"""Hazard: the training loop writes global_step onto the module each step and the compiled forward scales by it. From Lightning-AI/pytorch-lightning#17933: 'self.current_epoch' always returns 0 when compiling LightningModule."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17933"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.global_step = 0
        self.warmup_steps = 100

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ramp = min(1.0, (self.global_step + 1) / self.warmup_steps)  # linear warm-up of the residual branch
        return x + ramp * self.linear(x)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    model.global_step = i  # what a Trainer does between batches
    with torch.no_grad():
        model(torch.randn(4, 8))
