"""Clean: the same probed encoder, but the block returns the activation it wants captured and the probe trainer appends it to the class-level list in eager code after the call, so the compiled forward never touches the list and compiles once. Look-alike of h01, from pytorch/pytorch#169253."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/169253"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ProbeBlock(nn.Module):
    captured: list[torch.Tensor] = []  # shared by every ProbeBlock; filled by the probe trainer

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class ProbedEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(8, 8)
        self.block = ProbeBlock()
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.block(self.embed(x))
        return self.head(h), h.detach()


def build() -> nn.Module:
    ProbeBlock.captured.clear()
    return ProbedEncoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        _, probe_input = model(torch.randn(4, 8))
    ProbeBlock.captured.append(probe_input)  # eager bookkeeping, outside the compiled region
