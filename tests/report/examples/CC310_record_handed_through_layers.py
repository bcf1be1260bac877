"""CC310 for a record the step builds anew every call and passes to the model, which hands it through every layer's
forward to the attention that reads its Python counts (vLLM V0's attention metadata: `num_prefill_tokens` and
`num_decode_tokens` change with the batch's mix). The field every call fills with the same value (`block_size`) is
not reported; children are followed through `self.<child>(...)` and `for layer in self.layers`."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class AttentionMetadata:
    num_prefill_tokens: int
    num_decode_tokens: int
    block_size: int


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, h, attn_metadata: AttentionMetadata):
        n = attn_metadata.num_prefill_tokens
        prefill = self.proj(h[:n]) * attn_metadata.block_size
        return torch.cat([prefill, h[n:]]) if attn_metadata.num_decode_tokens else prefill


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = Attention()

    def forward(self, h, attn_metadata):
        return h + self.self_attn(h, attn_metadata=attn_metadata)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(2))

    def forward(self, h, attn_metadata):
        for i, layer in enumerate(self.layers):
            h = layer(h, attn_metadata)
        return h


def build() -> nn.Module:
    return Model()


def step(model, i):
    n = 2 + i % 3
    meta = AttentionMetadata(num_prefill_tokens=n, num_decode_tokens=6 - n, block_size=16)
    with torch.no_grad():
        model(torch.randn(6, 8), meta)  # expect: CC310 warning
