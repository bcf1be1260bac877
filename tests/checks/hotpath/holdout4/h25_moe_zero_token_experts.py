"""Hazard: each expert of a token-choice MoE is compiled on its own and receives however many tokens the router sent it, including 0 and 1, which Dynamo specialises, so inactive experts keep adding graphs. From pytorch/torchtitan#1364: [DSv3] Compile support for single GPU (inactive experts using zero-shaped tensors causing recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/torchtitan/pull/1364"
REGION = "experts.*"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}

NUM_EXPERTS = 4
TOKENS = 8


class Expert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Linear(8, 16)
        self.w2 = nn.Linear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.silu(self.w1(x)))


class MoE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(8, NUM_EXPERTS, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(NUM_EXPERTS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.softmax(self.router(x), dim=-1)
        top_score, top_expert = scores.max(dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            idx = (top_expert == e).nonzero().squeeze(-1)
            out[idx] = expert(x[idx]) * top_score[idx, None]
        return out


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(TOKENS, 8))
