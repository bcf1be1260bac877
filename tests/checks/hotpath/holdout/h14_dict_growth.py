"""Hazard: forward memoises per-step results in a dict on self whose keys grow every call. From pytorch/pytorch#123894: `defaultdict` recompilations (exceeds the recompile limit; guard on a dict entry)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/pytorch/pytorch/issues/123894"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 8, "graph_breaks": 0}}  # 2.11 re-measured on the CPU-only machine, 2.11.0+cu130 (the earlier record: 7 compiles, 0 breaks)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.seen: dict[int, torch.Tensor] = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.linear(x)
        self.seen[len(self.seen)] = out.detach().mean()
        return out


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
