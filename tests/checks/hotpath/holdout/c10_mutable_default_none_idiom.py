"""Clean: forward uses the `history=None` idiom, so every call starts from a fresh list. Look-alike of pytorch/pytorch#21545 (mutable default parameters; the fix is the None default)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/21545"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, history: list | None = None, dims: tuple = (0,)) -> torch.Tensor:
        if history is None:
            history = []
        h = self.linear(x)
        history.append(h)
        return torch.stack(history).mean(dim=dims)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
