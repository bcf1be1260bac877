"""Hazard: the training loop passes the current attention window size (an int that grows every two steps) into the compiled forward. From KellerJordan/modded-nanogpt#19 (window size changed mid-training)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/KellerJordan/modded-nanogpt/issues/19"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, window: int) -> torch.Tensor:
        pos = torch.arange(x.shape[0])
        mask = (pos[:, None] - pos[None, :]).abs() < window
        return mask.to(x.dtype) @ self.proj(x)


def build() -> nn.Module:
    return GPT()


def step(model: nn.Module, i: int) -> None:
    window_size = 2 * (1 + i // 2)
    with torch.no_grad():
        model(torch.randn(8, 8), window_size)
