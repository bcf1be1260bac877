"""Hazard: the rotary embedding recomputes and stores its cos/sin tables on self whenever the sequence length differs from `_seq_len_cached`, so a loop with varying lengths keeps rewriting module state inside the compiled forward. From facebookresearch/xformers#728 (rotary caches recomputed for seq_len < seq_len_cached)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/facebookresearch/xformers/issues/728"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim_model: int) -> None:
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim_model, 2).float() / dim_model))
        self.register_buffer("inv_freq", inv_freq)
        self._seq_len_cached = None
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_tables(self, x: torch.Tensor, seq_dimension: int = -2) -> tuple[torch.Tensor, torch.Tensor]:
        seq_len = x.shape[seq_dimension]
        if seq_len != self._seq_len_cached or self._cos_cached.device != x.device or self._cos_cached.dtype != x.dtype:
            self._seq_len_cached = seq_len
            t = torch.arange(seq_len, device=x.device, dtype=torch.float32)
            freqs = torch.einsum("i,j->ij", t, self.inv_freq.to(x.dtype))
            emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
            self._cos_cached = emb.cos()[None, None, :, :].to(x.dtype)
            self._sin_cached = emb.sin()[None, None, :, :].to(x.dtype)
        return self._cos_cached, self._sin_cached

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cos, sin = self._update_cos_sin_tables(k)

        def rotate_half(x: torch.Tensor) -> torch.Tensor:
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat((-x2, x1), dim=-1)

        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def build() -> nn.Module:
    return RotaryEmbedding(8)


def step(model: nn.Module, i: int) -> None:
    seq_len = (6, 4, 6, 5, 6, 4, 6, 5)[i]  # packed batches of varying length
    with torch.no_grad():
        q = torch.randn(1, 2, seq_len, 8)
        model(q, q.clone())
