"""Clean: xformers' ScaledDotProduct turns a boolean mask into an `AttentionMask` and calls `mask.to(dtype=q.dtype, device=q.device)`, whose `isinstance(device, torch.device)` asserts once failed under torch.compile ("TorchVariable() has no type"); on this torch the library object is traced through and the attention compiles once. From facebookresearch/xformers#720 (AttentionMask does not work with torch.compile)."""
from __future__ import annotations

import math

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import AttentionMask

LABEL = None
SOURCE = "https://github.com/facebookresearch/xformers/issues/720"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ScaledDotProduct(nn.Module):
    def __init__(self, dropout: float = 0.0, causal: bool = False, seq_len: int | None = None) -> None:
        super().__init__()
        self.attn_drop = nn.Dropout(dropout, inplace=False)
        self.causal = causal
        self.seq_len = seq_len

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, att_mask: torch.Tensor | AttentionMask | None = None):
        if isinstance(att_mask, torch.Tensor) and att_mask.dtype == torch.bool:
            att_mask = AttentionMask.from_bool(att_mask)
        if isinstance(att_mask, AttentionMask):
            mask = att_mask.to(dtype=q.dtype, device=q.device)
            scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1)) + mask.values
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        att = self.attn_drop(torch.softmax(scores, dim=-1))
        return att @ v


def build() -> nn.Module:
    return ScaledDotProduct(dropout=0.1, causal=True, seq_len=10)


def step(model: nn.Module, i: int) -> None:
    q, k, v = (torch.randn(3, 10, 4) for _ in range(3))
    mask = torch.ones(10, 10, dtype=torch.bool).tril()
    model(q, k, v, att_mask=mask)
