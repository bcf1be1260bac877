"""Clean: the same decode loop as a Python-int KV cache, but the cache (another module) tracks write positions in a `cache_pos` tensor buffer that `update()` advances in place, so nothing Dynamo guards on changes between tokens. From meta-pytorch/torchtune#2564: why `cache_pos` is a vector rather than a simple instance var (compatibility with torch.compile, see #1663)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchtune/issues/2564"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

HEADS, HEAD_DIM = 2, 4


class CachedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.out = nn.Linear(8, 8)
        self.kv_cache = _helpers_b.PositionKVCache(batch_size=1, max_seq_len=16, num_heads=HEADS, head_dim=HEAD_DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        k_all, v_all = self.kv_cache.update(k, v)
        attn = torch.softmax(q @ k_all.transpose(-1, -2) / HEAD_DIM**0.5, dim=-1) @ v_all
        return self.out(attn.transpose(1, 2).reshape(b, s, 8))


def build() -> nn.Module:
    return CachedAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8))
