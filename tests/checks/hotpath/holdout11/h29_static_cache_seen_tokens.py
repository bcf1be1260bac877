"""Hazard: with a static KV cache, the compiled decoder forward asks the cache object for `past_key_values.get_seq_length()` to build `cache_position`, and the cache's `update()` bumps its Python `seen_tokens` counter inside the same forward; the next decoding step sees a new count, fails the guard on it and recompiles (on torch 2.13 once, after which the count is traced as a symbol). From huggingface/transformers#29467 (Generate: handle `cache_position` update in `generate`; `seen_tokens` deprecated because it doesn't work with compilation)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import StaticCache

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/transformers/pull/29467"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


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

    def forward(self, input_ids: torch.Tensor, past_key_values: StaticCache) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids)
        past_seen_tokens = past_key_values.get_seq_length()
        cache_position = torch.arange(past_seen_tokens, past_seen_tokens + input_ids.shape[1])
        causal_mask = torch.arange(past_key_values.max_cache_len)[None, :] <= cache_position[:, None]
        for layer in self.layers:
            hidden_states = hidden_states + layer(hidden_states, causal_mask, past_key_values, cache_position)
        return self.lm_head(hidden_states)


_CACHE: list[StaticCache] = []


def build() -> nn.Module:
    _CACHE.clear()
    return LlamaForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    # one decoding step of a `generate(..., cache_implementation="static")` loop; the prompt was prefilled eagerly
    if i == 0:
        _CACHE[:] = [StaticCache(num_layers=2, max_cache_len=16, batch=1, dim=8)]
        _CACHE[0].seen_tokens = 4  # prefill of a 4-token prompt
    next_token = torch.tensor([[(7 * i + 3) % 32]])
    with torch.no_grad():
        model(next_token, _CACHE[0])
