"""Clean: the fixed KV cache of meta-pytorch/torchtune#1663 keeps its write position in a tensor buffer `cache_pos` advanced in place and writes with `index_copy_`, so decode steps and cache resets all reuse one graph."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchtune/pull/1663"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class KVCache(nn.Module):
    def __init__(self, max_seq_len: int = 16, head_dim: int = 8) -> None:
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, max_seq_len, head_dim), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, max_seq_len, head_dim), persistent=False)
        self.register_buffer("cache_pos", torch.arange(0, max_seq_len), persistent=False)

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.cache_pos -= self.cache_pos[0].clone()

    def update(self, k_val: torch.Tensor, v_val: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = k_val.shape[1]
        positions = self.cache_pos[:seq_len]
        self.k_cache.index_copy_(1, positions, k_val)
        self.v_cache.index_copy_(1, positions, v_val)
        self.cache_pos.add_(seq_len)
        return self.k_cache, self.v_cache


class SelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.k_proj = nn.Linear(8, 8)
        self.v_proj = nn.Linear(8, 8)
        self.kv_cache = KVCache()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, v = self.kv_cache.update(self.k_proj(x), self.v_proj(x))
        return (self.q_proj(x) @ k.transpose(1, 2)).softmax(-1) @ v


def build() -> nn.Module:
    return SelfAttention()


def step(model: nn.Module, i: int) -> None:
    if i % 4 == 0:
        model.kv_cache.reset()
    with torch.no_grad():
        model(torch.randn(1, 1, 8))
