"""Clean: the GPT keeps its KV cache as a registered module and its causal mask as a buffer built once in `set_kv_cache()` outside forward; decode steps pass `input_pos` as a tensor and index the buffers with it, so the compiled forward sees no changing Python state. From Lightning-AI/litgpt#507: Move KV cache management out of forward (to reduce the risk of recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Lightning-AI/litgpt/pull/507"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

MAX_SEQ = 16


class KVCache(nn.Module):
    def __init__(self, max_seq: int) -> None:
        super().__init__()
        self.register_buffer("k", torch.zeros(1, max_seq, 8), persistent=False)
        self.register_buffer("v", torch.zeros(1, max_seq, 8), persistent=False)

    def forward(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.k.index_copy_(1, input_pos, k)
        self.v.index_copy_(1, input_pos, v)
        return self.k, self.v


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)
        self.kv_cache: KVCache | None = None

    def set_kv_cache(self, max_seq: int) -> None:
        self.kv_cache = KVCache(max_seq)
        self.register_buffer("mask_cache", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool)), persistent=False)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k, v = self.kv_cache(input_pos, k, v)
        mask = self.mask_cache.index_select(0, input_pos)
        scores = (q @ k.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return self.proj(torch.softmax(scores / 8**0.5, dim=-1) @ v)


def build() -> nn.Module:
    model = GPT()
    model.set_kv_cache(MAX_SEQ)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8), torch.tensor([i]))
