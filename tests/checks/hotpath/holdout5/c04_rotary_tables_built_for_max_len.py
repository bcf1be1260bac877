"""Clean: the rotary embedding keeps the look of a cached implementation (`_seq_len_cached`, cos/sin caches) but builds the tables once for the maximum length in __init__ and only slices them in forward, with a fixed sequence length. From facebookresearch/xformers#728 (recompute the rotary caches only when the sequence grows)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/facebookresearch/xformers/issues/728"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim_model: int, max_seq_len: int = 32) -> None:
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim_model, 2).float() / dim_model))
        t = torch.arange(max_seq_len).float()
        emb = torch.cat([torch.outer(t, inv_freq)] * 2, dim=-1)
        self._seq_len_cached = max_seq_len
        self.register_buffer("_cos_cached", emb.cos()[None, None], persistent=False)
        self.register_buffer("_sin_cached", emb.sin()[None, None], persistent=False)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = k.shape[-2]
        cos = self._cos_cached[:, :, :seq_len]
        sin = self._sin_cached[:, :, :seq_len]

        def rotate_half(x: torch.Tensor) -> torch.Tensor:
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)

        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def build() -> nn.Module:
    return RotaryEmbedding(8)


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        q = torch.randn(1, 2, 6, 8)
        model(q, q.clone())
