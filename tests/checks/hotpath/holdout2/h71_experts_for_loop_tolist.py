"""Hazard: an MoE layer's for-loop expert path converts tokens-per-expert to a Python list with .tolist() and splits the tokens by it. From pytorch/torchtitan#2369: Fix torch.compile with MoE for-loop path."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2369"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 1}


class GroupedExperts(nn.Module):
    def __init__(self, num_experts: int = 4) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(num_experts, 8, 8) * 0.1)

    def forward(self, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
        num_tokens_per_expert_list = num_tokens_per_expert.tolist()
        x_splits = torch.split(x, num_tokens_per_expert_list, dim=0)
        out = [x_e @ self.w1[e] for e, x_e in enumerate(x_splits)]
        return torch.cat(out, dim=0)


def build() -> nn.Module:
    return GroupedExperts()


def step(model: nn.Module, i: int) -> None:
    counts = torch.tensor([2, 1, 3, 2]).roll(i)
    with torch.no_grad():
        model(torch.randn(8, 8), counts)
