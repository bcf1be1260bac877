"""Clean: the same MoE layer, but the experts run on every token as one batched einsum and the router's choice is applied as a one-hot mask, so no per-expert token count ever leaves the graph (no `.tolist()`, no split). Look-alike of the prime-rl MoE graph-break report, PrimeIntellect-ai/prime-rl#999."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/PrimeIntellect-ai/prime-rl/pull/999"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GroupedExperts(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, num_experts: int = 4) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden, dim) * 0.1)

    def forward(self, x: torch.Tensor, dispatch_mask: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.silu(torch.einsum("td,edh->eth", x, self.w1))
        out = torch.einsum("eth,ehd->etd", h, self.w2)
        return torch.einsum("etd,te->td", out, dispatch_mask)


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4, top_k: int = 1) -> None:
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.router = nn.Linear(dim, num_experts, bias=False)
        self.experts = GroupedExperts(dim, num_experts=num_experts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.softmax(self.router(x), dim=-1)
        top_scores, selected = torch.topk(scores, self.top_k, dim=-1)
        dispatch = torch.zeros_like(scores).scatter(1, selected, top_scores)
        return self.experts(x, dispatch)


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(16, 8)).sum().backward()
