"""Hazard: a decoder-only model compiled as a whole decodes token by token with a transformers-style DynamicCache: every step the cache's per-layer key/value lists grow along the sequence dim and forward reads `past_key_values.get_seq_length()` as a Python int for position ids, so the growing shapes and the int fail guards and recompile (on torch 2.13 the length goes dynamic after two recompiles). From huggingface/transformers#37908 (DynamicCache results in too many torch recompiles after 4.51)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import DynamicCache

LABEL = "shape"
SOURCE = "https://github.com/huggingface/transformers/issues/37908"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class TinyDecoderLayer(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, past_key_values: DynamicCache) -> torch.Tensor:
        q, k, v = self.q_proj(hidden), self.k_proj(hidden), self.v_proj(hidden)
        k, v = past_key_values.update(k, v, self.layer_idx)
        attn = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1)
        return hidden + self.o_proj(attn @ v)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.embed_positions = nn.Embedding(64, dim)
        self.layers = nn.ModuleList(TinyDecoderLayer(dim, i) for i in range(n_layers))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, past_key_values: DynamicCache) -> torch.Tensor:
        past_seen_tokens = past_key_values.get_seq_length()
        position_ids = torch.arange(past_seen_tokens, past_seen_tokens + input_ids.shape[1]).unsqueeze(0)
        hidden = self.embed_tokens(input_ids) + self.embed_positions(position_ids)
        for layer in self.layers:
            hidden = layer(hidden, past_key_values)
        return self.lm_head(hidden)


class Generator:
    def __init__(self) -> None:
        self.cache = DynamicCache()
        self.next_ids = torch.tensor([[1, 2, 3]])


_state: dict[int, Generator] = {}


def build() -> nn.Module:
    model = TinyCausalLM()
    _state[id(model)] = Generator()
    return model


def step(model: nn.Module, i: int) -> None:
    gen = _state[id(model)]
    with torch.no_grad():
        logits = model(gen.next_ids, gen.cache)
    gen.next_ids = logits[:, -1:].argmax(-1)
