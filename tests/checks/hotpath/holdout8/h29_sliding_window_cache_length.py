"""Hazard: a sliding-window decoder (Mistral / GPT-OSS style) is compiled for decoding with a transformers-style `StaticSlidingWindowLayer` cache; the layer keeps `cumulative_length` as a Python int, bumps it inside `update()` and derives the mask sizes (`get_mask_sizes`) from it, so each decode step fails the guard on the new length and recompiles until the limit is hit. From huggingface/transformers#44609 (StaticSlidingWindowLayer recompiles on every decode step because cumulative_length is a Python int)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import StaticSlidingWindowLayer

LABEL = "counter"
SOURCE = "https://github.com/huggingface/transformers/issues/44609"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class SlidingWindowAttention(nn.Module):
    def __init__(self, dim: int = 8, window: int = 4) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.cache_layer = StaticSlidingWindowLayer(max_cache_len=window, dim=dim)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden)
        keys, values = self.cache_layer.update(self.k_proj(hidden), self.v_proj(hidden))
        kv_length, kv_offset = self.cache_layer.get_mask_sizes()
        mask = torch.arange(keys.shape[1]) < kv_length
        scores = (q @ keys.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return hidden + self.o_proj(torch.softmax(scores, dim=-1) @ values)


def build() -> nn.Module:
    return SlidingWindowAttention().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8))  # one new token per decode step
