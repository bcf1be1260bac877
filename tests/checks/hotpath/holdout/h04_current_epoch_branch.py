"""Hazard: the loop sets current_epoch on the module and forward branches on it (freeze the backbone for the first epochs). From Lightning-AI/pytorch-lightning#17933: 'self.current_epoch' always returns 0 when compiling LightningModule."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17933"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Linear(8, 8)
        self.head = nn.Linear(8, 2)
        self.current_epoch = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.backbone(x)
        if self.current_epoch < 2:
            h = h.detach()  # backbone frozen during the first epochs
        return self.head(h)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    model.current_epoch = i // 2  # two batches per epoch
    model(torch.randn(4, 8)).sum().backward()
