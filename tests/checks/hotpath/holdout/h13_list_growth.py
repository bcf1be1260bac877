"""Hazard: forward appends every step's attention alignment to a Python list on self (decoder keeps its history). From pytorch/torchdynamo#330: tacotron2 hit recompilation cache limit (`len(alignments) == 0`, `== 1`, ...)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/pytorch/torchdynamo/issues/330"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.alignments: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        align = torch.softmax(self.attn(x), dim=-1)
        self.alignments.append(align)
        return align * len(self.alignments)


def build() -> nn.Module:
    return Decoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
