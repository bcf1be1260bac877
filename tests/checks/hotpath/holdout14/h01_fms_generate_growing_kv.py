"""Hazard: foundation-model-stack's `generate()` feeds the compiled decoder a `past_key_value_states` cache that grows by one token per step (torch.cat), so the cache's sequence length changes on every call and Dynamo recompiles (first for prefill->decode, then again before it makes the length dynamic). From foundation-model-stack/foundation-model-stack#353 (force dynamic shapes for the kv cache in generate())."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/foundation-model-stack/foundation-model-stack/pull/353"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class MultiHeadAttention(nn.Module):
    def __init__(self, emb_dim: int = 8) -> None:
        super().__init__()
        self.query = nn.Linear(emb_dim, emb_dim, bias=False)
        self.key = nn.Linear(emb_dim, emb_dim, bias=False)
        self.value = nn.Linear(emb_dim, emb_dim, bias=False)
        self.dense = nn.Linear(emb_dim, emb_dim, bias=False)

    def forward(self, x, past_key_value_state=None, use_cache=False):
        q, k, v = self.query(x), self.key(x), self.value(x)
        if past_key_value_state is not None:
            k = torch.cat((past_key_value_state[0], k), dim=1)
            v = torch.cat((past_key_value_state[1], v), dim=1)
        attn = torch.softmax(q @ k.transpose(1, 2) / 8**0.5, dim=-1) @ v
        return self.dense(attn), ((k, v) if use_cache else None)


class LLaMABlock(nn.Module):
    def __init__(self, emb_dim: int = 8) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(emb_dim)
        self.attn = MultiHeadAttention(emb_dim)
        self.ff = nn.Linear(emb_dim, emb_dim)

    def forward(self, x, past_key_value_state=None, use_cache=False):
        h, cache = self.attn(self.ln(x), past_key_value_state, use_cache)
        x = x + h
        return x + self.ff(x), cache


class LLaMA(nn.Module):
    def __init__(self, vocab: int = 16, emb_dim: int = 8, nlayers: int = 2) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim)
        self.layers = nn.ModuleList(LLaMABlock(emb_dim) for _ in range(nlayers))
        self.head = nn.Linear(emb_dim, vocab, bias=False)

    def forward(self, input_ids, past_key_value_states=None, use_cache=False):
        x = self.embedding(input_ids)
        present = []
        for i, layer in enumerate(self.layers):
            x, cache = layer(x, past_key_value_states[i] if past_key_value_states else None, use_cache)
            present.append(cache)
        return self.head(x), present


def build() -> nn.Module:
    return LLaMA()


_state: dict = {}


def step(model: nn.Module, i: int) -> None:
    """One iteration of fms.utils.generation.generate(): prefill on the prompt, then one token at a time."""
    with torch.no_grad():
        if i == 0:
            prompt = torch.tensor([[1, 5, 7, 2]])
            logits, _state["kv"] = model(prompt, None, use_cache=True)
        else:
            next_input = _state["next"]
            logits, _state["kv"] = model(next_input, _state["kv"], use_cache=True)
        _state["next"] = logits[:, -1:, :].argmax(dim=-1)
