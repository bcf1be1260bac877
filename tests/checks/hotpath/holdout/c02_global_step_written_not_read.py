"""Clean: the loop writes global_step and current_epoch onto the module every step, but the compiled forward never reads them. Look-alike of Lightning-AI/pytorch-lightning#17933: 'self.current_epoch' always returns 0 when compiling LightningModule."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17933"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.global_step = 0
        self.current_epoch = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))

    def on_train_batch_end(self) -> None:  # called by the loop, outside the compiled region
        self.global_step += 1
        self.current_epoch = self.global_step // 2


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
    model.on_train_batch_end()
