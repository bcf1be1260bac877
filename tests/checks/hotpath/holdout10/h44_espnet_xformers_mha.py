"""Hazard: an ESPnet-style `MultiHeadedAttention` routes its scores through xformers' `memory_efficient_attention` (a library op with an untraceable Python dispatcher), so each compiled encoder forward is split around the attention call. From facebookresearch/xformers#765 (`memory_efficient_attention` causes graph break in `torch.compile()`)."""
from __future__ import annotations

import math

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_c import fmha, memory_efficient_attention

LABEL = "library-object"
SOURCE = "https://github.com/facebookresearch/xformers/issues/765"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class MultiHeadedAttention(nn.Module):
    """Multi-Head Attention layer of Transformer (ESPnet layout, fused qkv)."""

    def __init__(self, n_head: int, n_feat: int, dropout_rate: float) -> None:
        super().__init__()
        assert n_feat % n_head == 0
        self.d_k = n_feat // n_head
        self.s_d_k = math.sqrt(self.d_k)
        self.h = n_head
        self.linear_qkv = nn.Linear(n_feat, n_feat * 3)
        self.linear_out = nn.Linear(n_feat, n_feat)
        self.dropout_rate = dropout_rate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        qkv = self.linear_qkv(x).view(b, t, 3, self.h, self.d_k)
        q, k, v = qkv.unbind(2)
        p = self.dropout_rate if self.training else 0.0
        out = memory_efficient_attention(q, k, v, attn_bias=fmha.LowerTriangularMask(), p=p)
        return self.linear_out(out.reshape(b, t, self.h * self.d_k))


class EncoderLayer(nn.Module):
    def __init__(self, size: int = 8) -> None:
        super().__init__()
        self.self_attn = MultiHeadedAttention(2, size, 0.0)
        self.norm1 = nn.LayerNorm(size)
        self.feed_forward = nn.Sequential(nn.Linear(size, size), nn.ReLU(), nn.Linear(size, size))
        self.norm2 = nn.LayerNorm(size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.norm1(x))
        return x + self.feed_forward(self.norm2(x))


def build() -> nn.Module:
    return EncoderLayer()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 6, 8))
    out.sum().backward()
    model.zero_grad(set_to_none=True)
