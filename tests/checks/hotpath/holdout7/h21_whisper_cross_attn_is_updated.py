"""Hazard: a Whisper-style decoder flips `EncoderDecoderCache.is_updated[layer_idx]` inside the compiled forward the first time it fills the cross-attention cache, and `reset()` clears it for every new utterance, so the compiled decoder is guarded on that dict entry and keeps two graphs (fill / reuse) that it switches between. From huggingface/transformers#31166 ([whisper] static kv cache: detecting the first decoding step under torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import EncoderDecoderCache, StaticCache

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/transformers/pull/31166"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

DIM, ENC_LEN, MAX_LEN = 8, 6, 8


class WhisperAttention(nn.Module):
    def __init__(self, dim: int, layer_idx: int, is_cross: bool) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.is_cross = is_cross
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, key_value_states=None, past_key_value=None, cache_position=None):
        q = self.q_proj(hidden_states)
        is_updated = False
        encoder_decoder_cache = past_key_value
        if past_key_value is not None:
            if self.is_cross:
                is_updated = past_key_value.is_updated.get(self.layer_idx)
                past_key_value = past_key_value.cross_attention_cache
            else:
                past_key_value = past_key_value.self_attention_cache
        current_states = key_value_states if self.is_cross else hidden_states
        if self.is_cross and past_key_value is not None and is_updated:
            # reuse k,v, cross_attentions
            k = past_key_value.key_cache[self.layer_idx]
            v = past_key_value.value_cache[self.layer_idx]
        else:
            k, v = self.k_proj(current_states), self.v_proj(current_states)
            if past_key_value is not None:
                position = torch.arange(current_states.shape[1]) if self.is_cross else cache_position
                k, v = past_key_value.update(k, v, self.layer_idx, position)
                if self.is_cross:
                    # set flag that curr layer for cross-attn is already updated so we can re-use in subsequent calls
                    encoder_decoder_cache.is_updated[self.layer_idx] = True
        attn = torch.softmax(q @ k.transpose(1, 2) / DIM**0.5, dim=-1)
        return self.out_proj(attn @ v)


class WhisperDecoderLayer(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.self_attn = WhisperAttention(dim, layer_idx, is_cross=False)
        self.encoder_attn = WhisperAttention(dim, layer_idx, is_cross=True)
        self.fc = nn.Linear(dim, dim)

    def forward(self, hidden_states, encoder_hidden_states, past_key_value, cache_position):
        hidden_states = hidden_states + self.self_attn(hidden_states, None, past_key_value, cache_position)
        hidden_states = hidden_states + self.encoder_attn(hidden_states, encoder_hidden_states, past_key_value)
        return hidden_states + torch.relu(self.fc(hidden_states))


class WhisperDecoder(nn.Module):
    def __init__(self, dim: int = DIM, vocab: int = 16, layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(WhisperDecoderLayer(dim, i) for i in range(layers))
        self.proj_out = nn.Linear(dim, vocab)

    def forward(self, input_ids, encoder_hidden_states, past_key_values, cache_position):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, encoder_hidden_states, past_key_values, cache_position)
        return self.proj_out(h)


def build() -> nn.Module:
    model = WhisperDecoder()
    model.past_key_values = EncoderDecoderCache(
        StaticCache(num_layers=2, max_cache_len=MAX_LEN, dim=DIM), StaticCache(num_layers=2, max_cache_len=ENC_LEN, dim=DIM)
    )
    return model


def step(model: nn.Module, i: int) -> None:
    cache = model.past_key_values
    position = i % 4  # four decoding steps per 30 s window, then the next window
    if position == 0:
        cache.reset()
        model.encoder_hidden_states = torch.randn(1, ENC_LEN, DIM)
        model.next_token = torch.zeros(1, 1, dtype=torch.long)
    with torch.no_grad():
        logits = model(model.next_token, model.encoder_hidden_states, cache, torch.tensor([position]))
    model.next_token = logits[:, -1:].argmax(-1)
