"""Hazard: a transformers-style `StaticCache` allocates its per-layer key/value tensors lazily inside `update()` on the first forward that reaches it (`lazy_initialization`, flipping `is_initialized`); with chunked prefill every forward runs compiled, so the first call traces the allocation and the second sees an initialized cache and recompiles. From huggingface/transformers#46421 (cache lazy initialization leads to spurious recompilation with chunked prefill)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/huggingface/transformers/issues/46421"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class StaticLayer:
    def __init__(self, max_cache_len: int) -> None:
        self.max_cache_len = max_cache_len
        self.is_initialized = False
        self.keys = None
        self.values = None

    def lazy_initialization(self, key_states: torch.Tensor) -> None:
        b, h, _, d = key_states.shape
        self.keys = torch.zeros(b, h, self.max_cache_len, d, dtype=key_states.dtype)
        self.values = torch.zeros(b, h, self.max_cache_len, d, dtype=key_states.dtype)
        self.is_initialized = True

    def update(self, key_states, value_states, cache_position):
        if not self.is_initialized:
            self.lazy_initialization(key_states)
        self.keys.index_copy_(2, cache_position, key_states)
        self.values.index_copy_(2, cache_position, value_states)
        return self.keys, self.values


class StaticCache:
    def __init__(self, num_layers: int, max_cache_len: int) -> None:
        self.layers = [StaticLayer(max_cache_len) for _ in range(num_layers)]

    def update(self, key_states, value_states, layer_idx, cache_position):
        return self.layers[layer_idx].update(key_states, value_states, cache_position)


class LlamaAttention(nn.Module):
    def __init__(self, layer_idx: int, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.layer_idx, self.heads, self.head_dim = layer_idx, heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, past_key_values, cache_position):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        k, v = past_key_values.update(k, v, self.layer_idx, cache_position)
        mask = torch.arange(k.shape[2]) <= cache_position.view(-1, 1)
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class LlamaModel(nn.Module):
    def __init__(self, num_layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(32, 8)
        self.layers = nn.ModuleList(LlamaAttention(i) for i in range(num_layers))

    def forward(self, input_ids, past_key_values, cache_position):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = h + layer(h, past_key_values, cache_position)
        return h


def build() -> nn.Module:
    return LlamaModel()


_caches: dict = {}


def step(model: nn.Module, i: int) -> None:
    """generate(prefill_chunk_size=2): each new prompt gets a fresh StaticCache, prefilled in compiled chunks."""
    prompt_len, chunk = 8, 2
    start = (i * chunk) % prompt_len
    if start == 0:
        _caches["cache"] = StaticCache(num_layers=len(model.layers), max_cache_len=16)
    ids = torch.arange(start, start + chunk).view(1, -1) % 32
    with torch.no_grad():
        model(ids, _caches["cache"], torch.arange(start, start + chunk))
