"""Clean: the same token-by-token decoding of a compiled Parler-TTS decoder, but with the static cache the PR adds: the key/value buffers are preallocated at the maximum length and updated in place at `cache_position` (a tensor), and the prompt is prefilled outside the compiled decode step, so every compiled call sees the same shapes. Look-alike of huggingface/parler-tts#89."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/parler-tts/pull/89"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
MAX_CACHE_LEN = 16


class StaticCache(nn.Module):
    def __init__(self, num_layers: int = 2, dim: int = 8) -> None:
        super().__init__()
        for idx in range(num_layers):
            self.register_buffer(f"key_{idx}", torch.zeros(1, MAX_CACHE_LEN, dim), persistent=False)
            self.register_buffer(f"value_{idx}", torch.zeros(1, MAX_CACHE_LEN, dim), persistent=False)

    def update(self, idx: int, k, v, cache_position):
        key, value = getattr(self, f"key_{idx}"), getattr(self, f"value_{idx}")
        key.index_copy_(1, cache_position, k)
        value.index_copy_(1, cache_position, v)
        return key, value


class ParlerTTSDecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, hidden_states, cache, idx, cache_position):
        q, k, v = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        k, v = cache.update(idx, k, v, cache_position)
        visible = torch.arange(MAX_CACHE_LEN) <= cache_position[-1]
        scores = (q @ k.transpose(-1, -2) / 8**0.5).masked_fill(~visible, float("-inf"))
        hidden_states = hidden_states + self.out_proj(torch.softmax(scores, dim=-1) @ v)
        return hidden_states + self.fc(hidden_states)


class ParlerTTSDecoder(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(ParlerTTSDecoderLayer(dim) for _ in range(2))
        self.lm_head = nn.Linear(dim, vocab)
        self.cache = StaticCache(len(self.layers), dim)

    def forward(self, input_ids, cache_position):
        hidden_states = self.embed_tokens(input_ids)
        for idx, layer in enumerate(self.layers):
            hidden_states = layer(hidden_states, self.cache, idx, cache_position)
        return self.lm_head(hidden_states)


PROMPT = torch.tensor([[1, 2, 3, 4]])


def build() -> nn.Module:
    model = ParlerTTSDecoder()
    with torch.no_grad():  # prefill the prompt once, eagerly, before the compiled decode loop
        for pos in range(PROMPT.shape[1]):
            model.forward(PROMPT[:, pos : pos + 1], torch.tensor([pos]))
    return model


def step(model: nn.Module, i: int) -> None:
    pos = PROMPT.shape[1] + i
    with torch.no_grad():
        model(torch.tensor([[i % 16]]), torch.tensor([pos]))
