"""Hazard: an interpretability probe keeps captured activations in a list defined on the module's class (`ProbeBlock.captured`), appended inside forward, so each call sees a longer class-level list and Dynamo recompiles every step until the limit (and the appends themselves are dropped under compile). From pytorch/pytorch#169253 (class-level list mutations are dropped)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/pytorch/pytorch/issues/169253"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 4, "graph_breaks": 2}}  # measured on the H100 machine


class ProbeBlock(nn.Module):
    captured: list[torch.Tensor] = []  # shared by every ProbeBlock; drained by the probe trainer

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.mlp(self.norm(x))
        ProbeBlock.captured.append(h.detach())
        return h


class ProbedEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(8, 8)
        self.block = ProbeBlock()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(self.embed(x)))


def build() -> nn.Module:
    ProbeBlock.captured.clear()
    return ProbedEncoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
