"""Clean: the same MoE router filling preallocated buffers with `torch.topk(..., out=...)`, but the engine pads every
step's tokens to one fixed bucket size (CUDA-graph style) and reuses the same buffers, so no size guard ever changes;
the look-alike of pytorch/pytorch#135859 that compiles once."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/135859"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

BUCKET = 16


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


class PaddedRunner:
    def __init__(self) -> None:
        self.hidden = torch.zeros(BUCKET, 8)
        self.topk_weights = torch.empty(BUCKET, 2)
        self.topk_ids = torch.empty(BUCKET, 2, dtype=torch.long)

    def run(self, model: nn.Module, tokens: torch.Tensor):
        n = tokens.shape[0]
        self.hidden.zero_()
        self.hidden[:n].copy_(tokens)
        with torch.no_grad():
            model(self.hidden, self.topk_weights, self.topk_ids)
        return self.topk_weights[:n], self.topk_ids[:n]


RUNNER = PaddedRunner()


def build() -> nn.Module:
    return TopKRouter()


def step(model: nn.Module, i: int) -> None:
    num_tokens = (4, 6, 8, 5, 7, 3, 9, 10)[i]
    RUNNER.run(model, torch.randn(num_tokens, 8))
