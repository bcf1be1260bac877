"""Hazard: a TimesFM-style attention writes new keys/values into a preallocated decode cache at `decode_cache.next_index[0]`, a tensor element used as a Python slice bound, so Dynamo leaves the graph at the cache write and the forward runs as several pieces on every decode step. From google-research/timesfm#457 (`torch.compile(self)` is a no-op; KV cache writes in MultiHeadAttention.forward cause a graph break)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/google-research/timesfm/issues/457"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


@dataclass
class DecodeCache:
    next_index: torch.Tensor
    num_masked: torch.Tensor
    key: torch.Tensor
    value: torch.Tensor


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, decode_cache: DecodeCache | None = None) -> torch.Tensor:
        n_patches = x.shape[1]
        query, key, value = self.qkv_proj(x).chunk(3, dim=-1)
        if decode_cache is not None:
            start = decode_cache.next_index[0]
            end = start + n_patches
            decode_cache.key[:, start:end] = key
            decode_cache.value[:, start:end] = value
            key, value = decode_cache.key, decode_cache.value
            decode_cache.next_index += n_patches
        attn = torch.softmax(query @ key.transpose(-1, -2), dim=-1)
        return self.out(attn @ value)


class Decoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(dim)
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, decode_cache: DecodeCache) -> torch.Tensor:
        return self.head(self.attn(x, decode_cache))


def build() -> nn.Module:
    return Decoder()


_CACHE: dict[str, DecodeCache] = {}


def step(model: nn.Module, i: int) -> None:
    if i == 0:  # a new forecast: fresh cache, one patch decoded per step afterwards
        _CACHE["c"] = DecodeCache(
            next_index=torch.zeros(1, dtype=torch.long),
            num_masked=torch.zeros(1, dtype=torch.long),
            key=torch.zeros(1, 16, 8),
            value=torch.zeros(1, 16, 8),
        )
    with torch.no_grad():
        model(torch.randn(1, 1, 8), _CACHE["c"])
