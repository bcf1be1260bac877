"""Hazard: the attention module keeps its KV cache on self and grows it with torch.cat plus a Python `ptr_current_pos` int during generation, so each decoding step changes both a tensor shape and an int the compiled forward reads. From rasbt/LLMs-from-scratch#705 (improve KV cache code for torch.compile: move the cache out of the model classes)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/rasbt/LLMs-from-scratch/pull/705"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in: int = 8, d_out: int = 8, context_length: int = 32) -> None:
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1), persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr_current_pos = 0

    def forward(self, x: torch.Tensor, use_cache: bool = True) -> torch.Tensor:
        num_tokens = x.shape[1]
        keys_new, values_new, queries = self.W_key(x), self.W_value(x), self.W_query(x)
        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new
        attn_scores = queries @ keys.transpose(1, 2)
        num_tokens_K = keys.shape[1]
        if use_cache:
            mask_bool = self.mask.bool()[self.ptr_current_pos : self.ptr_current_pos + num_tokens, :num_tokens_K]
            self.ptr_current_pos += num_tokens
        else:
            mask_bool = self.mask.bool()[:num_tokens, :num_tokens_K]
        attn_scores = attn_scores.masked_fill(mask_bool, -torch.inf)
        return torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1) @ values


def build() -> nn.Module:
    return MultiHeadAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8))  # one generated token per step
