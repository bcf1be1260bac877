"""Clean: the generate loop still computes prompt_length + max_new_tokens for every prompt, but the KV cache is allocated once at the model's maximum supported length and prompts are padded to a fixed bucket with a tensor input_pos, so the cache shape and every Python int forward reads stay constant and it compiles once. From Lightning-AI/litgpt#1610 (kv_cache_size="max_model_supported")."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/Lightning-AI/litgpt/issues/1610"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

BLOCK_SIZE = 16
PROMPT_BUCKET = 12


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
        self.max_seq_length = BLOCK_SIZE
        self.kv_cache = KVCache(1, BLOCK_SIZE, 8)

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor, valid_len: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        k_all, v_all = self.kv_cache(input_pos, k, v)
        mask = torch.arange(self.max_seq_length) < valid_len
        scores = (q @ k_all.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return self.proj(torch.softmax(scores, dim=-1) @ v_all)


def build() -> nn.Module:
    return GPT()


def step(model: nn.Module, i: int) -> None:
    prompt_length, max_new_tokens = 3 + i, 4
    max_returned_tokens = prompt_length + max_new_tokens
    assert max_returned_tokens <= model.max_seq_length  # checked, never used to resize
    prompt = F.pad(torch.randn(1, prompt_length, 8), (0, 0, 0, PROMPT_BUCKET - prompt_length))
    with torch.no_grad():
        model(prompt, torch.arange(PROMPT_BUCKET), torch.tensor(prompt_length))
