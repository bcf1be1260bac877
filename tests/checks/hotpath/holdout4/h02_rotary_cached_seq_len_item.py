"""Hazard: the rotary embedding keeps the cached length in a 0-d tensor and compares `offset + seq_len <= cached_freqs_seq_len.item()` in forward, a data-dependent branch that graph-breaks, from lucidrains/rotary-embedding-torch#38 (Graph break from Tensor.item())."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/lucidrains/rotary-embedding-torch/pull/38"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 2}


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int = 8, max_len: int = 64, theta: float = 10000.0) -> None:
        super().__init__()
        self.freqs = nn.Parameter(1.0 / theta ** (torch.arange(0, dim, 2).float() / dim), requires_grad=False)
        self.register_buffer("cached_freqs", torch.zeros(max_len, dim), persistent=False)
        self.register_buffer("cached_freqs_seq_len", torch.tensor(0), persistent=False)

    def forward(self, t: torch.Tensor, seq_len: int, offset: int = 0) -> torch.Tensor:
        should_cache = True
        if should_cache and (offset + seq_len) <= self.cached_freqs_seq_len.item():
            return self.cached_freqs[offset : offset + seq_len].detach()
        freqs = torch.einsum("i,j->ij", t, self.freqs).repeat_interleave(2, dim=-1)
        if should_cache and offset == 0:
            self.cached_freqs[:seq_len] = freqs.detach()
            self.cached_freqs_seq_len.copy_(torch.tensor(seq_len))
        return freqs


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = nn.Linear(8, 8)
        self.rotary = RotaryEmbedding()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq_len = x.shape[1]
        freqs = self.rotary(torch.arange(seq_len, dtype=torch.float32), seq_len)
        q = self.to_q(x)
        return q * freqs.cos() + q.flip(-1) * freqs.sin()


def build() -> nn.Module:
    return Attention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 16, 8))
