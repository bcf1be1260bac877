"""Clean: the loop's changing scalar (a += 0.01) is passed into the compiled forward as a 0-d tensor, not a Python float. Look-alike of pytorch/pytorch#171320 (scalar arithmetic recompiles) and pytorch/pytorch#130467 (tensor lr)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/171320"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * (a * b)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.tensor(0.01 * (i + 1)), torch.tensor(1.0))
