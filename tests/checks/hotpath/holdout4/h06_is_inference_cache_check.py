"""Hazard: the embedder checks `self._cos_cached.is_inference()` in forward to decide whether to rebuild its rotary cache, and `Tensor.is_inference` is not traceable, so every call graph-breaks, from nomic-ai/contrastors#84 (Fix graph break with torch.compile for nomic-embed-text-v1)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/nomic-ai/contrastors/pull/84"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class NomicRotary(nn.Module):
    def __init__(self, dim: int = 8, max_len: int = 32) -> None:
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_len).float()
        freqs = torch.outer(t, inv_freq).repeat_interleave(2, dim=-1)
        self.register_buffer("_cos_cached", freqs.cos(), persistent=False)
        self.register_buffer("_sin_cached", freqs.sin(), persistent=False)

    def forward(self, qk: torch.Tensor) -> torch.Tensor:
        seqlen = qk.shape[1]
        # a cache built under inference_mode cannot be used for training: rebuild it then
        if self._cos_cached.is_inference() and torch.is_grad_enabled():
            self._cos_cached = self._cos_cached.clone()
            self._sin_cached = self._sin_cached.clone()
        return qk * self._cos_cached[:seqlen] + qk.flip(-1) * self._sin_cached[:seqlen]


class Embedder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qk = nn.Linear(8, 8)
        self.rotary = NomicRotary()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.rotary(self.qk(x)).mean(1)


def build() -> nn.Module:
    return Embedder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 12, 8))
