"""Clean: the model takes its inputs as a dict keyed by an Enum member and indexes it inside forward; the report raised a guard error on the Enum key, but on torch 2.13 this compiles once. From pytorch/pytorch#111603 (Enum used as a key of the input raises guards error)."""
from __future__ import annotations

from enum import Enum

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/111603"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class NodeType(Enum):
    PAPER = "paper"
    AUTHOR = "author"


class HeteroEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.ModuleDict({t.value: nn.Linear(8, 8) for t in NodeType})

    def forward(self, x_dict: dict[NodeType, torch.Tensor]) -> torch.Tensor:
        paper = self.lin[NodeType.PAPER.value](x_dict[NodeType.PAPER])
        author = self.lin[NodeType.AUTHOR.value](x_dict[NodeType.AUTHOR])
        return paper + author.mean(dim=0, keepdim=True)


def build() -> nn.Module:
    return HeteroEncoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model({NodeType.PAPER: torch.randn(4, 8), NodeType.AUTHOR: torch.randn(3, 8)})
