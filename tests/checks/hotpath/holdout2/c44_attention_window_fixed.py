"""Clean: the same model with the window fixed at build time; the loop only logs the step on its own object. From KellerJordan/modded-nanogpt#19."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/KellerJordan/modded-nanogpt/issues/19"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.attn_window = 3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        pos = torch.arange(n)
        mask = (pos[:, None] - pos[None, :]).abs() < self.attn_window
        return mask.to(x.dtype) @ self.proj(x)


class Log:
    steps: list[int] = []


def build() -> nn.Module:
    return GPT()


def step(model: nn.Module, i: int) -> None:
    Log.steps.append(i)
    with torch.no_grad():
        model(torch.randn(8, 8))
