"""Hazard: each layer writes its decode cache with `key[:, start:end] = k` where `start = decode_cache.next_index[0]` is a tensor, an implicit `.item()` that Dynamo cannot trace, so the compiled forward graph-breaks once per layer, from google-research/timesfm#459 (torch.compile was a no-op in load_checkpoint; forward graph-breaks on the data-dependent KV-cache slice)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/google-research/timesfm/pull/459"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}


class DecodeCache(nn.Module):
    def __init__(self, max_len: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.register_buffer("key", torch.zeros(1, max_len, dim), persistent=False)
        self.register_buffer("value", torch.zeros(1, max_len, dim), persistent=False)
        self.register_buffer("next_index", torch.zeros(1, dtype=torch.long), persistent=False)


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.decode_cache = DecodeCache()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        start = self.decode_cache.next_index[0]
        end = start + x.shape[1]
        self.decode_cache.key[:, start:end] = k
        self.decode_cache.value[:, start:end] = v
        self.decode_cache.next_index += x.shape[1]
        attn = (q @ self.decode_cache.key.transpose(1, 2)).softmax(-1)
        return attn @ self.decode_cache.value


def build() -> nn.Module:
    return DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 2, 8))  # one decode patch of 2 steps per call
