"""Hazard: a torchtitan-style MoE compiled as one region runs its experts with the for-loop path:
`torch.bincount(selected).tolist()` graph-breaks, and the resume function receives the per-expert token counts as
Python ints that size each expert's slice, so it recompiles on the counts (a single-token expert, other counts once
they turn dynamic, an expert that received no tokens and gets a zero-sized slice) as new count patterns arrive. From
pytorch/torchtitan#2312 (torch.compile fails with DeepSeekV3 + SimpleFSDP: dynamic tensor shapes from the number of
tokens per expert in the MoE for-loop path)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/torchtitan/issues/2312"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 2}
REGION = "moe"


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TokenChoiceTopKRouter(nn.Module):
    def __init__(self, dim: int, num_experts: int) -> None:
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = torch.sigmoid(self.gate(x))
        top_scores, selected = scores.topk(1, dim=-1)
        return top_scores.squeeze(-1), selected.squeeze(-1)


class MoE(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4) -> None:
        super().__init__()
        self.router = TokenChoiceTopKRouter(dim, num_experts)
        self.experts = nn.ModuleList(FeedForward(dim, 16) for _ in range(num_experts))
        self.num_experts = num_experts

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top_scores, selected = self.router(x)
        order = selected.argsort()
        num_tokens_per_expert = torch.bincount(selected, minlength=self.num_experts).tolist()
        routed = x[order] * top_scores[order, None]
        outs = [expert(chunk) for expert, chunk in zip(self.experts, routed.split(num_tokens_per_expert), strict=True)]
        out = torch.empty_like(x)
        out[order] = torch.cat(outs)
        return out


class MoEBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.moe = MoE(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.moe(self.norm(x))


def build() -> nn.Module:
    return MoEBlock()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(12, 8)).sum().backward()
