"""Hazard: Parler-TTS's decoder is compiled and driven token by token by `generate`, with the keys/values of earlier steps kept in a dynamic cache (a tuple per layer that is concatenated with the new step), so the cache tensors passed to the compiled forward change length at every decoding step: after the prefill and the first cached step, the next length fails the shape guards and recompiles (the report saw a recompilation at each forward pass). From huggingface/parler-tts#89 (add static cache: dynamic k/v caching causes recompilation at each forward pass)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/parler-tts/pull/89"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class ParlerTTSDecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, hidden_states, past_key_value=None):
        q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        if past_key_value is not None:
            k = torch.cat([past_key_value[0], k], dim=1)
            v = torch.cat([past_key_value[1], v], dim=1)
        attn = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, dim=-1) @ v
        hidden_states = hidden_states + self.out_proj(attn)
        return hidden_states + self.fc(hidden_states), (k, v)


class ParlerTTSDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(ParlerTTSDecoderLayer(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, past_key_values=None):
        hidden_states = self.embed_tokens(input_ids)
        next_cache = []
        for idx, layer in enumerate(self.layers):
            hidden_states, kv = layer(hidden_states, None if past_key_values is None else past_key_values[idx])
            next_cache.append(kv)
        return self.lm_head(hidden_states), tuple(next_cache)


class _GenerationState:
    """What `generate` carries between decoding steps."""

    def __init__(self) -> None:
        self.past_key_values = None
        self.next_token = torch.zeros(1, 1, dtype=torch.long)


_STATE: dict[int, _GenerationState] = {}


def build() -> nn.Module:
    model = ParlerTTSDecoder()
    _STATE[id(model)] = _GenerationState()
    return model


def step(model: nn.Module, i: int) -> None:
    state = _STATE[id(model)]
    if i == 0:  # prefill with the prompt
        input_ids = torch.tensor([[1, 2, 3, 4]])
        state.past_key_values = None
    else:
        input_ids = state.next_token
    with torch.no_grad():
        logits, state.past_key_values = model(input_ids, state.past_key_values)
    state.next_token = logits[:, -1:].argmax(-1)
