"""Hazard: packed-sequence attention computes max_seqlen with `.max().item()` from cu_seqlens inside forward (the varlen kernel wants a Python int), which breaks the graph on every call. From Dao-AILab/flash-attention#1333 (wrap func into torch ops to avoid torch.compile graph breaks; max_length_q.item() in the HF flash-attention path)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/Dao-AILab/flash-attention/pull/1333"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


def varlen_attention(q, k, v, cu_seqlens: torch.Tensor, max_seqlen: int) -> torch.Tensor:
    """Eager stand-in for flash_attn_varlen_func: only looks at the first max_seqlen positions per window."""
    scores = (q[:, :max_seqlen] @ k[:, :max_seqlen].transpose(-1, -2)) / q.shape[-1] ** 0.5
    out = torch.softmax(scores, dim=-1) @ v[:, :max_seqlen]
    return F.pad(out, (0, 0, 0, q.shape[1] - max_seqlen))


class PackedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max().item()
        return self.proj(varlen_attention(q, k, v, cu_seqlens, int(max_seqlen)))


def build() -> nn.Module:
    return PackedAttention()


def step(model: nn.Module, i: int) -> None:
    lengths = torch.tensor([2, 3, 1, 2]) if i % 2 else torch.tensor([3, 3, 1, 1])
    cu_seqlens = F.pad(lengths.cumsum(0), (1, 0))
    with torch.no_grad():
        model(torch.randn(2, 8, 8), cu_seqlens)
