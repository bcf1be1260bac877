"""Hazard: the KV cache keeps its fill level in a Python int `size` that `update()` bumps inside the compiled attention, so every decode position is a new guard value (`kv_cache.size == 4`) and a recompile, from meta-pytorch/torchtune#1663 (Fixing recompiles in KV-cache + compile)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/meta-pytorch/torchtune/pull/1663"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class KVCache(nn.Module):
    def __init__(self, max_seq_len: int = 16, head_dim: int = 8) -> None:
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, max_seq_len, head_dim), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, max_seq_len, head_dim), persistent=False)
        self.size = 0

    def reset(self) -> None:
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.size = 0

    def update(self, k_val: torch.Tensor, v_val: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = k_val.shape[1]
        self.k_cache[:, self.size : self.size + seq_len] = k_val
        self.v_cache[:, self.size : self.size + seq_len] = v_val
        self.size += seq_len
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
        scores = self.q_proj(x) @ k.transpose(1, 2)
        return scores.softmax(-1) @ v


def build() -> nn.Module:
    return SelfAttention()


def step(model: nn.Module, i: int) -> None:
    if i % 4 == 0:  # a new prompt every 4 decode steps: the generation loop resets the cache
        model.kv_cache.reset()
    with torch.no_grad():
        model(torch.randn(1, 1, 8))
