"""Hazard: a sliding block KV cache keeps its fill level `_n_cached` as a Python int and branches on "steady state" inside the compiled forward, so every chunk until the cache fills, and the switch to steady state, is a new specialisation. From NVIDIA/flashdreams#257 (BlockKVCache steady state triggers recompiling)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/NVIDIA/flashdreams/pull/257"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class BlockKVCache(nn.Module):
    def __init__(self, chunk_size: int, num_chunks: int, dim: int) -> None:
        super().__init__()
        self.chunk_size = chunk_size
        self.total_size = chunk_size * num_chunks
        self.register_buffer("k", torch.zeros(self.total_size, dim), persistent=False)
        self.register_buffer("v", torch.zeros(self.total_size, dim), persistent=False)
        self._n_cached = 0

    def is_steady_state(self) -> bool:
        return self._n_cached >= self.total_size

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.is_steady_state():
            # roll left by one chunk and overwrite the rightmost slot
            self.k.copy_(torch.roll(self.k, -self.chunk_size, 0))
            self.v.copy_(torch.roll(self.v, -self.chunk_size, 0))
            self.k[-self.chunk_size :] = k
            self.v[-self.chunk_size :] = v
        else:
            start = self._n_cached
            self.k[start : start + self.chunk_size] = k
            self.v[start : start + self.chunk_size] = v
            self._n_cached += self.chunk_size
        return self.k[: self._n_cached], self.v[: self._n_cached]


class ChunkAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.cache = BlockKVCache(chunk_size=4, num_chunks=3, dim=8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k_all, v_all = self.cache.update(k, v)
        attn = torch.softmax(q @ k_all.t() / 8**0.5, dim=-1)
        return attn @ v_all


def build() -> nn.Module:
    return ChunkAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))  # one autoregressive chunk per step
