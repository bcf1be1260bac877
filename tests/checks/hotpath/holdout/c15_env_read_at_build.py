"""Clean: the environment variable is read once when the model is built and kept as a constant attribute; forward never touches os.environ. Look-alike of pytorch/pytorch#189027 (os.getenv results baked into compiled graphs)."""
from __future__ import annotations

import os

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/pull/189027"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self, fast_path: bool) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.fast_path = fast_path

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.fast_path:
            return self.linear(x) + 1
        return self.linear(x) - 1


def build() -> nn.Module:
    return Model(fast_path=bool(int(os.getenv("HOLDOUT_C15_USE_FAST_PATH", "0"))))


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
