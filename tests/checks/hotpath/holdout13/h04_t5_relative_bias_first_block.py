"""Hazard: a T5 stack compiled block by block: only block 0 owns the relative-attention-bias table (`has_relative_attention_bias=True`) and computes `position_bias`, the later blocks receive it as an argument, so the shared `T5Block.forward` code is guarded on that per-instance bool and on `position_bias is None` and compiles again for the later blocks. From pytorch/pytorch#93774 (Guard Failures in T5 Model, recompilation cache limit hit on `modeling_t5.py` forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/pytorch/issues/93774"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "block.*"


class T5Attention(nn.Module):
    def __init__(self, d_model: int = 8, n_heads: int = 2, has_relative_attention_bias: bool = False, num_buckets: int = 8) -> None:
        super().__init__()
        self.n_heads, self.d_kv = n_heads, d_model // n_heads
        self.has_relative_attention_bias = has_relative_attention_bias
        self.num_buckets = num_buckets
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(num_buckets, n_heads)

    def compute_bias(self, length: int) -> torch.Tensor:
        ctx = torch.arange(length)[:, None]
        mem = torch.arange(length)[None, :]
        buckets = (mem - ctx).abs().clamp(max=self.num_buckets - 1)
        return self.relative_attention_bias(buckets).permute(2, 0, 1).unsqueeze(0)

    def forward(self, hidden: torch.Tensor, position_bias: torch.Tensor | None = None):
        b, t, _ = hidden.shape
        q = self.q(hidden).view(b, t, self.n_heads, self.d_kv).transpose(1, 2)
        k = self.k(hidden).view(b, t, self.n_heads, self.d_kv).transpose(1, 2)
        v = self.v(hidden).view(b, t, self.n_heads, self.d_kv).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        if position_bias is None:
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros(1, self.n_heads, t, t)
            else:
                position_bias = self.compute_bias(t)
        attn = torch.softmax(scores + position_bias, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, t, -1)
        return self.o(out), position_bias


class T5Block(nn.Module):
    def __init__(self, d_model: int = 8, has_relative_attention_bias: bool = False) -> None:
        super().__init__()
        self.layer = nn.ModuleList(
            [nn.LayerNorm(d_model), T5Attention(d_model, has_relative_attention_bias=has_relative_attention_bias), nn.LayerNorm(d_model), nn.Linear(d_model, d_model)]
        )

    def forward(self, hidden: torch.Tensor, position_bias: torch.Tensor | None = None):
        attn_out, position_bias = self.layer[1](self.layer[0](hidden), position_bias=position_bias)
        hidden = hidden + attn_out
        hidden = hidden + self.layer[3](torch.relu(self.layer[2](hidden)))
        return hidden, position_bias


class T5Stack(nn.Module):
    def __init__(self, n_layers: int = 3, d_model: int = 8) -> None:
        super().__init__()
        self.block = nn.ModuleList([T5Block(d_model, has_relative_attention_bias=bool(i == 0)) for i in range(n_layers)])

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        position_bias = None
        for layer_module in self.block:
            hidden, position_bias = layer_module(hidden, position_bias=position_bias)
        return hidden


def build() -> nn.Module:
    return T5Stack()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 5, 8))
