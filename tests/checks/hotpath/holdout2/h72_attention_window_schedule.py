"""Hazard: the training loop grows the sliding attention window on the model every two steps (window size warm-up) and the compiled forward builds its mask from it. From KellerJordan/modded-nanogpt#19 (changing the attention window mid-training requires a recompile)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/KellerJordan/modded-nanogpt/issues/19"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.attn_window = 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        pos = torch.arange(n)
        mask = (pos[:, None] - pos[None, :]).abs() < self.attn_window
        return mask.to(x.dtype) @ self.proj(x)


def build() -> nn.Module:
    return GPT()


def step(model: nn.Module, i: int) -> None:
    model.attn_window = 1 + i // 2
    with torch.no_grad():
        model(torch.randn(8, 8))
