"""Hazard: an MoE layer turns per-expert token counts into a Python list with .tolist() and loops over it. From PrimeIntellect-ai/prime-rl#996: graph break torch compile (`num_tokens_per_expert.tolist()` in `_run_experts_for_loop`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/PrimeIntellect-ai/prime-rl/issues/996"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 2}


class MoE(nn.Module):
    def __init__(self, n_experts: int = 4) -> None:
        super().__init__()
        self.router = nn.Linear(8, n_experts)
        self.experts = nn.ModuleList(nn.Linear(8, 8) for _ in range(n_experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        choice = self.router(x).argmax(dim=-1)
        order = torch.argsort(choice)
        counts = torch.bincount(choice, minlength=len(self.experts)).tolist()
        out = torch.empty_like(x)
        start = 0
        for expert, n in zip(self.experts, counts):
            if n:
                idx = order[start:start + n]
                out[idx] = expert(x[idx])
            start += n
        return out


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(6, 8))
