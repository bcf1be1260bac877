"""Clean: the same compiled Llama-style decoding loop, with the StaticCache strategy transformers kept: the generation loop owns `cache_position`, a tensor it advances between calls, and the cache writes with `index_copy_` at those positions, so no Python int changes inside the compiled forward. From huggingface/transformers#35299 (the reference experiment contrasts the internal integer with "the external `cache_positions` Tensor", which is what compiled generation uses)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import StaticCacheByPosition

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/35299"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

MAX_LEN = 16


class TinyAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(
        self, x: torch.Tensor, past_key_values: StaticCacheByPosition, cache_position: torch.Tensor
    ) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        keys, values = past_key_values.update(k, v, cache_position)
        mask = (torch.arange(MAX_LEN) <= cache_position[-1]).view(1, 1, 1, MAX_LEN)
        att = torch.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        return self.o_proj(att.transpose(1, 2).reshape(b, t, d))


class TinyLlama(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.self_attn = TinyAttention(dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(
        self, input_ids: torch.Tensor, past_key_values: StaticCacheByPosition, cache_position: torch.Tensor
    ) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        h = h + self.self_attn(h, past_key_values, cache_position)
        return self.lm_head(h)


_cache = StaticCacheByPosition(batch=1, heads=2, max_len=MAX_LEN, head_dim=4)
_state: dict[str, torch.Tensor] = {}


def build() -> nn.Module:
    _cache.reset()
    _state["next"] = torch.tensor([[1]])
    _state["cache_position"] = torch.tensor([0])
    return TinyLlama()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        logits = model(_state["next"], past_key_values=_cache, cache_position=_state["cache_position"])
    _state["next"] = logits[:, -1:].argmax(-1)
    _state["cache_position"] = _state["cache_position"] + 1
