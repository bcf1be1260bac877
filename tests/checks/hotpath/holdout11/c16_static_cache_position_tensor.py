"""Clean: the same compiled decoder with a static KV cache, but as in the fix `generate` owns the position: it passes `cache_position` as a tensor it advances outside the model, and the cache only writes K/V at those positions (no Python counter is bumped inside the forward), so every decoding step reuses the one compiled graph. Look-alike of h29 (huggingface/transformers#29467)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import StaticCache


class PositionalStaticCache(StaticCache):
    """StaticCache after the fix: `update` writes at `cache_position` and keeps no Python tally."""

    def update(self, key_states, value_states, layer_idx, cache_kwargs):
        position = cache_kwargs["cache_position"]
        self.key_cache[layer_idx][:, position] = key_states
        self.value_cache[layer_idx][:, position] = value_states
        return self.key_cache[layer_idx], self.value_cache[layer_idx]

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/29467"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LlamaAttention(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, hidden_states, attention_mask, past_key_value, cache_position):
        q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        k, v = past_key_value.update(k, v, self.layer_idx, {"cache_position": cache_position})
        attn = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        return self.o_proj(attn)


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaAttention(dim, k) for k in range(n_layers))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids: torch.Tensor, past_key_values: StaticCache, cache_position: torch.Tensor) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids)
        causal_mask = torch.arange(past_key_values.max_cache_len)[None, :] <= cache_position[:, None]
        for layer in self.layers:
            hidden_states = hidden_states + layer(hidden_states, causal_mask, past_key_values, cache_position)
        return self.lm_head(hidden_states)


_CACHE: list = []


def build() -> nn.Module:
    _CACHE.clear()
    return LlamaForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    # one decoding step of a `generate(..., cache_implementation="static")` loop; the prompt was prefilled eagerly
    if i == 0:
        _CACHE[:] = [PositionalStaticCache(num_layers=2, max_cache_len=16, batch=1, dim=8), torch.tensor([4])]  # after a 4-token prefill
    cache, cache_position = _CACHE
    next_token = torch.tensor([[(7 * i + 3) % 32]])
    with torch.no_grad():
        model(next_token, cache, cache_position)
    _CACHE[1] = cache_position + 1  # model_kwargs["cache_position"] = cache_position[-1:] + 1
