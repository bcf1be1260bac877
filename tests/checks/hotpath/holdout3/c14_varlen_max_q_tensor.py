"""Clean: varlen attention receives per-batch document metadata whose `max_q` is a 0-dim tensor (not an int from `.item()`) and whose `cu_seqlens` keep a fixed length, so new document boundaries every step do not recompile. The fix of pytorch/torchtitan#2823."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/pull/2823"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class VarlenAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wqkv = nn.Linear(8, 24)
        self.wo = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, meta: _helpers_b.VarlenMetadata) -> torch.Tensor:
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        pos = torch.arange(x.shape[0])
        doc = torch.searchsorted(meta.cu_seqlens[1:], pos, right=True)
        mask = doc[:, None] == doc[None, :]
        scale = meta.max_q.to(x.dtype).rsqrt()
        att = (q @ k.T * scale).masked_fill(~mask, float("-inf")).softmax(-1)
        return self.wo(att @ v)


def build() -> nn.Module:
    return VarlenAttention()


def step(model: nn.Module, i: int) -> None:
    first = 2 + i % 5
    meta = _helpers_b.create_varlen_metadata(torch.tensor([first, 6, 10 - first]))
    with torch.no_grad():
        model(torch.randn(16, 8), meta)
