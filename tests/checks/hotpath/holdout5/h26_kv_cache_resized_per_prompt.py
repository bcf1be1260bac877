"""Hazard: the chat/generate loop sets `model.max_seq_length = prompt_length + max_new_tokens` and re-allocates the KV cache for every prompt, so forward sees a new Python int and a new cache shape each time and recompiles. From Lightning-AI/litgpt#1610 (Set kv cache size based on resource needs: dynamic max_returned_tokens triggers re-compilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/Lightning-AI/litgpt/issues/1610"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class KVCache(nn.Module):
    def __init__(self, batch_size: int, max_seq_length: int, head_dim: int) -> None:
        super().__init__()
        self.register_buffer("k", torch.zeros(batch_size, max_seq_length, head_dim), persistent=False)
        self.register_buffer("v", torch.zeros(batch_size, max_seq_length, head_dim), persistent=False)

    def forward(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
        self.k.index_copy_(1, input_pos, k)
        self.v.index_copy_(1, input_pos, v)
        return self.k, self.v


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)
        self.max_seq_length = 16
        self.kv_cache: KVCache | None = None

    def set_kv_cache(self, batch_size: int) -> None:
        self.kv_cache = KVCache(batch_size, self.max_seq_length, 8)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k_all, v_all = self.kv_cache(input_pos, k, v)
        mask = torch.arange(self.max_seq_length) <= input_pos.max()
        scores = (q @ k_all.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return self.proj(torch.softmax(scores, dim=-1) @ v_all)


def build() -> nn.Module:
    model = GPT()
    model.set_kv_cache(batch_size=1)
    return model


def step(model: nn.Module, i: int) -> None:
    prompt_length, max_new_tokens = 3 + i, 4
    max_returned_tokens = prompt_length + max_new_tokens
    first_turn = i == 0
    if first_turn or max_returned_tokens > model.max_seq_length:
        model.max_seq_length = max_returned_tokens
        model.set_kv_cache(batch_size=1)
    with torch.no_grad():
        model(torch.randn(1, prompt_length, 8), torch.arange(prompt_length))
