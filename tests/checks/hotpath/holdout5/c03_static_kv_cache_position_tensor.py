"""Clean: the KV cache is preallocated to the context length and written with index_copy_ at a cache-position tensor the loop passes in, so decoding never changes a shape or a Python int the compiled forward reads. From rasbt/LLMs-from-scratch#705 (KV cache code made to work with torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/rasbt/LLMs-from-scratch/pull/705"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class StaticCacheAttention(nn.Module):
    def __init__(self, d: int = 8, context_length: int = 16) -> None:
        super().__init__()
        self.W_query = nn.Linear(d, d, bias=False)
        self.W_key = nn.Linear(d, d, bias=False)
        self.W_value = nn.Linear(d, d, bias=False)
        self.register_buffer("cache_k", torch.zeros(1, context_length, d), persistent=False)
        self.register_buffer("cache_v", torch.zeros(1, context_length, d), persistent=False)
        self.register_buffer("positions", torch.arange(context_length), persistent=False)

    def forward(self, x: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        self.cache_k.index_copy_(1, cache_position, self.W_key(x))
        self.cache_v.index_copy_(1, cache_position, self.W_value(x))
        scores = self.W_query(x) @ self.cache_k.transpose(1, 2)
        visible = self.positions[None, None, :] <= cache_position[None, :, None]
        scores = scores.masked_fill(~visible, -torch.inf)
        return torch.softmax(scores / x.shape[-1] ** 0.5, dim=-1) @ self.cache_v


def build() -> nn.Module:
    return StaticCacheAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8), torch.tensor([i]))  # one generated token per step
