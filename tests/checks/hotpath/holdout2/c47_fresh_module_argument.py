"""Clean: the loop passes a freshly built normalisation module into the compiled forward on every call; reported to recompile every call, on torch 2.13 it compiles once (the module is inlined, guarded by type, not identity). From pytorch/pytorch#134954: Dynamo recompiles code on every call when arguments include nn.Module."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/134954"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, norm: nn.Module) -> torch.Tensor:
        return self.proj(norm(x))


def build() -> nn.Module:
    return Head()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), nn.LayerNorm(8))
