"""Hazard: a decoding helper around a shared `lm_head` is called with a Python int offset `c` that alternates 0 and 1 between calls (prefill / decode); Dynamo always specializes ints 0 and 1, so the two values get two separate compiled entries. From pytorch/pytorch#110048 (Recompilation for nn module guards when it should not: generate(x, 0) / generate(x, 1) in a loop)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "int-arg"
SOURCE = "https://github.com/pytorch/pytorch/issues/110048"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, c: int) -> torch.Tensor:
        return self.lm_head(x) + c


def build() -> nn.Module:
    return Generator()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(8, 8), 0)
        model(torch.randn(8, 8), 1)
