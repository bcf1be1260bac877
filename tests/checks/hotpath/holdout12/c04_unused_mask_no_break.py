"""Clean: the encoder still takes an `attention_mask` it no longer uses while the padded length of that mask changes every batch; torch 2.13 installs no shape guard on the unused tensor, so the encoder compiles once. Look-alike of pytorch/pytorch#131893 (Static shape guards are put on tensors even if they never actually get used), which no longer reproduces here."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/131893"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        mask = attention_mask  # kept for API compatibility; padding is already stripped
        h = self.proj(hidden)
        return self.out(torch.relu(h))


def build() -> nn.Module:
    return Encoder()


def step(model: nn.Module, i: int) -> None:
    padded_len = [16, 24, 32, 40, 16, 48, 24, 56][i]
    model(torch.randn(4, 8), torch.ones(4, padded_len, dtype=torch.bool)).sum().backward()
