"""Hazard: a helper decorated with `torch._dynamo.disable` is defined inside forward, so each call builds a fresh disabled function: a graph break at every call and a recompile of the resumed frame, from pytorch/pytorch#157399 ([dynamo] using disable inside of compile always recompiles)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/157399"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 2}


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        @torch._dynamo.disable
        def clamp_logits(t: torch.Tensor) -> torch.Tensor:  # kept out of the graph "for numerical parity"
            return t.clamp(-10.0, 10.0)

        return clamp_logits(self.proj(x))


def build() -> nn.Module:
    return Head()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
