"""Hazard: a packed (varlen) BERT layer passes `max_seqlen` as a Python int computed per batch from cu_seqlens into the compiled attention, so the first new packing's max length fails the guard on the int argument and recompiles (then the int is made dynamic). From Dao-AILab/quack#150 (handling recompile in apply rotary emb with max_seqlen)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/Dao-AILab/quack/issues/150"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class VarlenRotaryAttention(nn.Module):
    def __init__(self, dim: int = 8, max_position: int = 64) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_position).float()
        freqs = torch.outer(t, inv_freq)
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor, max_seqlen: int) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        cos, sin = self.cos[:max_seqlen], self.sin[:max_seqlen]
        # pad each packed sequence to max_seqlen (what the varlen kernel does internally)
        positions = torch.arange(x.shape[0], device=x.device) - cu_seqlens[torch.bucketize(torch.arange(x.shape[0]), cu_seqlens[1:], right=True)]
        c, s = cos[positions.clamp(max=max_seqlen - 1)], sin[positions.clamp(max=max_seqlen - 1)]
        q1, q2 = q.chunk(2, dim=-1)
        q = torch.cat([q1 * c - q2 * s, q1 * s + q2 * c], dim=-1)
        return torch.softmax(q @ k.t(), dim=-1) @ v


def build() -> nn.Module:
    return VarlenRotaryAttention()


def step(model: nn.Module, i: int) -> None:
    lengths = [(3, 5), (4, 4), (2, 6), (1, 7), (3, 5), (5, 3), (6, 2), (4, 4)][i]  # 8 tokens packed per batch
    cu_seqlens = torch.tensor([0, lengths[0], lengths[0] + lengths[1]])
    max_seqlen = int(max(lengths))
    with torch.no_grad():
        model(torch.randn(8, 8), cu_seqlens, max_seqlen)
