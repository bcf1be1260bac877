"""Hazard: the sparse MoE block loops over `expert_hitted = (...).nonzero()` and gathers tokens with `torch.where`, data-dependent shapes that graph-break inside the routing loop, from tenstorrent/tt-xla#1283 (sparse MoE trace: dynamic shapes in the Mixtral/Qwen3 MoE block cause graph breaks under torch.compile)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/tenstorrent/tt-xla/issues/1283"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 2}


class SparseMoeBlock(nn.Module):
    def __init__(self, hidden_dim: int = 8, num_experts: int = 4, top_k: int = 2) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.top_k = top_k
        self.gate = nn.Linear(hidden_dim, num_experts, bias=False)
        self.experts = nn.ModuleList(nn.Linear(hidden_dim, hidden_dim) for _ in range(num_experts))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        routing_weights = F.softmax(self.gate(hidden_states), dim=1)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        final_hidden_states = torch.zeros_like(hidden_states)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        expert_hitted = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hitted:
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current = expert_layer(hidden_states[top_x]) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current)
        return final_hidden_states


def build() -> nn.Module:
    return SparseMoeBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(6, 8))
