"""Hazard: an MoE dispatch sizes its per-expert buffer from `int(num_tokens_per_expert.max())`, a tensor value read into Python. From pytorch/torchtitan#2369 (host syncs in the MoE for-loop path)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2369"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class Dispatch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
        capacity = int(num_tokens_per_expert.max())
        buf = x.new_zeros(capacity, x.shape[1])
        return self.w(x).sum(0, keepdim=True) + buf.sum()


def build() -> nn.Module:
    return Dispatch()


def step(model: nn.Module, i: int) -> None:
    counts = torch.tensor([2, 1, 3, 2]) + (i % 3)
    with torch.no_grad():
        model(torch.randn(8, 8), counts)
