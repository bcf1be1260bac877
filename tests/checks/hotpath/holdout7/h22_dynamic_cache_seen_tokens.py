"""Hazard: a decoder compiled with `model.compile()` receives a transformers `DynamicCache` each step; inside the compiled forward `cache.update()` bumps the Python int `_seen_tokens`, appends to the per-layer lists on the prefill and concatenates afterwards, so the compiled forward is guarded on the cache's Python state (list lengths, the `_seen_tokens` int, the growing key length) and recompiles for the prefill, the first decode step and again once those values change (on torch 2.13 they then go dynamic). From huggingface/transformers#40328 ([rfc] Prototype to make torch.compile work with DynamicCache)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import DynamicCache

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/transformers/pull/40328"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}

DIM = 8


class Qwen2Attention(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, past_key_value=None):
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        if past_key_value is not None:
            k, v = past_key_value.update(k, v, self.layer_idx)
        return self.o_proj(torch.nn.functional.scaled_dot_product_attention(q, k, v))


class Qwen2Model(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = DIM, layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Qwen2Attention(dim, i) for i in range(layers))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, past_key_values=None, use_cache=True):
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache()
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = h + layer(h, past_key_values)
        return self.lm_head(h), past_key_values


def build() -> nn.Module:
    return Qwen2Model()


def step(model: nn.Module, i: int) -> None:
    # a prefill, then decoding steps scored with the growing cache
    with torch.no_grad():
        if i == 0:
            model._cache = DynamicCache()
            logits, model._cache = model(torch.randint(0, 32, (1, 6)), model._cache)
        else:
            logits, model._cache = model(torch.randint(0, 32, (1, 1)), model._cache)
