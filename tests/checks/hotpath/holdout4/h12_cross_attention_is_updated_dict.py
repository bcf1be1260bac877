"""Hazard: the encoder-decoder cache records in a dict `is_updated[layer_idx] = True` (and stores the cross-attention keys) inside the compiled decoder on the first decoding step, so the second step sees a different dict and recompiles, from huggingface/transformers#31166 ([whisper] static kv cache: detecting the first decoding step under compile)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/huggingface/transformers/pull/31166"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class EncoderDecoderCache:
    def __init__(self) -> None:
        self.is_updated: dict[int, bool] = {}
        self.cross_attention_cache: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def reset(self) -> None:
        self.is_updated.clear()
        self.cross_attention_cache.clear()


class WhisperCrossAttention(nn.Module):
    def __init__(self, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.q_proj = nn.Linear(8, 8)
        self.k_proj = nn.Linear(8, 8)
        self.v_proj = nn.Linear(8, 8)

    def forward(self, hidden: torch.Tensor, encoder_states: torch.Tensor, cache: EncoderDecoderCache) -> torch.Tensor:
        if cache.is_updated.get(self.layer_idx, False):
            k, v = cache.cross_attention_cache[self.layer_idx]
        else:
            k, v = self.k_proj(encoder_states), self.v_proj(encoder_states)
            cache.cross_attention_cache[self.layer_idx] = (k, v)
            cache.is_updated[self.layer_idx] = True
        return (self.q_proj(hidden) @ k.transpose(1, 2)).softmax(-1) @ v


class WhisperDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder_attn = WhisperCrossAttention(layer_idx=0)
        self.past_key_values = EncoderDecoderCache()

    def forward(self, hidden: torch.Tensor, encoder_states: torch.Tensor) -> torch.Tensor:
        return self.encoder_attn(hidden, encoder_states, self.past_key_values)


def build() -> nn.Module:
    return WhisperDecoder()


def step(model: nn.Module, i: int) -> None:
    if i % 4 == 0:  # a new audio segment: generate() resets the cache
        model.past_key_values.reset()
    with torch.no_grad():
        model(torch.randn(1, 1, 8), torch.randn(1, 6, 8))
