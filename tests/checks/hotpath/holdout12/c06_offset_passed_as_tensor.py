"""Clean: the same decoding helper around the shared `lm_head`, but the prefill/decode offset is passed as a 0-d tensor built by the loop (`torch.tensor(c)`) and only used arithmetically, so 0 and 1 are data and the helper compiles once. Look-alike of pytorch/pytorch#110048 (generate(x, 0) / generate(x, 1) in a loop)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/110048"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return self.lm_head(x) + c


def build() -> nn.Module:
    return Generator()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(8, 8), torch.tensor(0))
        model(torch.randn(8, 8), torch.tensor(1))
