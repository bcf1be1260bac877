"""Hazard: the MoE layer's `_run_experts_for_loop` turns the per-expert token counts into a Python list with `.tolist()` to `torch.split` the routed tokens, a data-dependent call that breaks the graph in the compiled MoE forward; the resumed code then specialises on the split sizes, so every new routing recompiles. From PrimeIntellect-ai/prime-rl#999 (fix graph break moe: `num_tokens_per_expert.tolist()` in `_run_experts_for_loop`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/PrimeIntellect-ai/prime-rl/pull/999"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 4}


class GroupedExperts(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_experts: int = 4) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.1)

    def forward(self, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
        return _run_experts_for_loop(self.w1, self.w2, x, num_tokens_per_expert)


def _run_experts_for_loop(w1: torch.Tensor, w2: torch.Tensor, x: torch.Tensor, num_tokens_per_expert: torch.Tensor) -> torch.Tensor:
    num_tokens_per_expert = num_tokens_per_expert.tolist()
    x_splits = torch.split(x, num_tokens_per_expert, dim=0)
    out_splits = []
    for expert_idx, x_expert in enumerate(x_splits):
        h = torch.nn.functional.silu(x_expert @ w1[expert_idx])
        out_splits.append(h @ w2[expert_idx])
    return torch.cat(out_splits, dim=0)


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4, top_k: int = 1) -> None:
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = GroupedExperts(dim, num_experts=num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.softmax(self.router(x), dim=-1)
        top_scores, selected = torch.topk(scores, self.top_k, dim=-1)
        selected = selected.view(-1)
        num_tokens_per_expert = torch.bincount(selected, minlength=self.num_experts)
        order = torch.argsort(selected, stable=True)
        routed = x[order]
        out = self.experts(routed, num_tokens_per_expert)
        combined = torch.empty_like(out)
        combined[order] = out * top_scores.view(-1, 1)[order]
        return combined


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(16, 8)).sum().backward()
