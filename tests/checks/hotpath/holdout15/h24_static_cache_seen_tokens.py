"""Hazard: a Llama-style decoder is compiled for the decoding loop and writes into a transformers-style StaticCache that keeps its write index as a Python int (`seen_tokens`) and advances it inside `update()`, called from the compiled forward. From huggingface/transformers#35299 (experiment reviving "the old strategy: keep track of the number of seen tokens (= cache write index) as an internal integer in `StaticCache`, as opposed to using the external `cache_positions` Tensor"; the integer is read inside the compiled graph and changes every decoding step)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import StaticCacheSeenTokens

LABEL = "counter"
SOURCE = "https://github.com/huggingface/transformers/pull/35299"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

MAX_LEN = 16


class TinyAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, past_key_values: StaticCacheSeenTokens) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        length = past_key_values.seen_tokens + t
        keys, values = past_key_values.update(k, v)
        mask = (torch.arange(MAX_LEN) < length).view(1, 1, 1, MAX_LEN)
        att = torch.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        return self.o_proj(att.transpose(1, 2).reshape(b, t, d))


class TinyLlama(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.self_attn = TinyAttention(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, past_key_values: StaticCacheSeenTokens) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        h = h + self.self_attn(h, past_key_values)
        return self.lm_head(h)


_cache = StaticCacheSeenTokens(batch=1, heads=2, max_len=MAX_LEN, head_dim=4)
_state: dict[str, torch.Tensor] = {}


def build() -> nn.Module:
    _cache.reset()
    _state["next"] = torch.tensor([[1]])
    return TinyLlama()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        logits = model(_state["next"], past_key_values=_cache)
    _state["next"] = logits[:, -1:].argmax(-1)
