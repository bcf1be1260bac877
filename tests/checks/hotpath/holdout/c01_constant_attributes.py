"""Clean: forward reads Python int/float/str/bool attributes that are set once in __init__ and never change. Look-alike of pytorch/pytorch#128319: [dynamo] Recompilation on a counter-like attribute of nn module."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/128319"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.n_heads = 2
        self.scale = 8 ** -0.5
        self.activation = "gelu"
        self.pre_norm = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x) * self.scale
        h = h.view(x.shape[0], self.n_heads, -1)
        h = torch.nn.functional.gelu(h) if self.activation == "gelu" else torch.relu(h)
        return h.reshape(x.shape) if self.pre_norm else h.reshape(x.shape) + x


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
