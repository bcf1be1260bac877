"""Hazard: forward draws a fresh seed with torch.seed() and reseeds the global RNG before dropout (Reformer's _init_attention_seed). From pytorch/pytorch#101154: [Dynamo] TB hf_Reformer graph breaks."""
from __future__ import annotations

import sys

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/101154"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.dropout = nn.Dropout(0.1)
        self.attention_seed = 0

    def _init_attention_seed(self) -> None:
        self.attention_seed = int(torch.seed() % sys.maxsize)
        torch.manual_seed(self.attention_seed)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self._init_attention_seed()
        return self.dropout(self.linear(x))


def build() -> nn.Module:
    return Model().train()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
