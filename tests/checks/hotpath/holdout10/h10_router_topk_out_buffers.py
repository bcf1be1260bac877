"""Hazard: an MoE router writes its top-k expert choice into preallocated buffers with `torch.topk(..., out=(vals,
idx))`; the serving loop hands it a new number of tokens every step, and because the out= overload has no symbolic
meta function the graph stays specialised on each size, so it recompiles for every new token count instead of going
dynamic once. From pytorch/pytorch#135859 (torch.bmm, torch.topk with out variants causing recompilations)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/135859"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.15": {"compiles_over_8_steps": 2, "graph_breaks": 0}}  # 2.15 measured on the CPU-only machine (2.15.0+cu132)


class TopKRouter(nn.Module):
    def __init__(self, dim: int = 8, num_experts: int = 4, top_k: int = 2) -> None:
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.top_k = top_k

    def forward(self, hidden_states: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor):
        scores = torch.softmax(self.gate(hidden_states), dim=-1)
        torch.topk(scores, self.top_k, dim=-1, out=(topk_weights, topk_ids))
        topk_weights /= topk_weights.sum(dim=-1, keepdim=True)
        return topk_weights, topk_ids


def build() -> nn.Module:
    return TopKRouter()


def step(model: nn.Module, i: int) -> None:
    num_tokens = (4, 6, 8, 5, 7, 3, 9, 10)[i]  # continuous batching: tokens scheduled this step
    topk_weights = torch.empty(num_tokens, 2)
    topk_ids = torch.empty(num_tokens, 2, dtype=torch.long)
    with torch.no_grad():
        model(torch.randn(num_tokens, 8), topk_weights, topk_ids)
