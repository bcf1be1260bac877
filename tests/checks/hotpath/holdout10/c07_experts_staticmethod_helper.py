"""Clean: a torchtitan-style MoE `GroupedExperts` routes its computation through a `@staticmethod` helper on the
class (`_run_experts_grouped_mm`); torchtitan#1565 moved such helpers out because Dynamo graph-broke on user-class
staticmethods, but on torch 2.13 the call is inlined and the block compiles once with no break."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/1565"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GroupedExperts(nn.Module):
    def __init__(self, dim: int = 8, hidden_dim: int = 16, num_experts: int = 4) -> None:
        super().__init__()
        self.num_experts = num_experts
        self.w1 = nn.Parameter(torch.randn(num_experts, dim, hidden_dim) * 0.1)
        self.w2 = nn.Parameter(torch.randn(num_experts, hidden_dim, dim) * 0.1)

    @staticmethod
    def _run_experts_grouped_mm(w1: torch.Tensor, w2: torch.Tensor, x: torch.Tensor, num_experts: int) -> torch.Tensor:
        x = x.view(num_experts, -1, x.shape[-1])  # tokens already permuted and padded per expert
        h = torch.nn.functional.silu(torch.bmm(x, w1))
        return torch.bmm(h, w2).reshape(-1, w2.shape[-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._run_experts_grouped_mm(self.w1, self.w2, x, self.num_experts)


class MoE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.router = nn.Linear(8, 4, bias=False)
        self.experts = GroupedExperts()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.softmax(self.router(x), dim=-1)
        out = self.experts(x.repeat(4, 1))  # every expert sees every token (capacity = all)
        return (out.view(4, -1, 8) * scores.t().unsqueeze(-1)).sum(0)


def build() -> nn.Module:
    return MoE()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(8, 8)).sum().backward()
