"""Hazard: a KV cache object keeps its write position as a Python int and advances it inside forward. From huggingface/transformers#29114: `torch.compile` compatibility with `generate` + static cache (seen_tokens as an int is "bugged" under compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/huggingface/transformers/pull/29114"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class StaticCache:
    def __init__(self, max_len: int, dim: int) -> None:
        self.keys = torch.zeros(max_len, dim)
        self.seen_tokens = 0

    def update(self, k: torch.Tensor) -> torch.Tensor:
        n = k.shape[0]
        self.keys[self.seen_tokens:self.seen_tokens + n] = k
        self.seen_tokens += n
        return self.keys


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k_proj = nn.Linear(8, 8)
        self.cache = StaticCache(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys = self.cache.update(self.k_proj(x))
        return x @ keys.t()


def build() -> nn.Module:
    return Decoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 8))  # one decoding step, one new token
