"""Hazard: the loop stores a string curriculum phase on the module and forward compares it. From pytorch/pytorch#100455: recompilation caused by dynamic inputs with guard failures (string values are guarded by equality, `L['texts'] == '...'`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/100455"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.phase = "warmup"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        if self.phase == "warmup":
            return h * 0.1
        if self.phase == "main":
            return h
        return h * 0.5


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    model.phase = ("warmup", "main", "cooldown")[min(i // 3, 2)]
    with torch.no_grad():
        model(torch.randn(4, 8))
