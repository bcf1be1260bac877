"""Clean: forward reads hyper-parameters (ints, floats, an activation name) from a frozen dataclass config passed at construction and never changed, so every guard on it holds. From pytorch/pytorch#124357 (wrong result when attributes of a Python class instance change between compiled calls): here the config object is never mutated."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/124357"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


@dataclass(frozen=True)
class BlockConfig:
    hidden: int = 8
    expansion: int = 2
    dropout: float = 0.0
    residual_scale: float = 0.5
    activation: str = "gelu"


class Block(nn.Module):
    def __init__(self, config: BlockConfig) -> None:
        super().__init__()
        self.config = config
        self.up = nn.Linear(config.hidden, config.hidden * config.expansion)
        self.down = nn.Linear(config.hidden * config.expansion, config.hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(x)
        h = torch.nn.functional.gelu(h) if self.config.activation == "gelu" else torch.relu(h)
        h = torch.nn.functional.dropout(h, p=self.config.dropout, training=self.training)
        return x + self.config.residual_scale * self.down(h)


def build() -> nn.Module:
    return Block(BlockConfig())


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
