"""Clean: attention reads its metadata from a vLLM-style global forward context that the runner swaps every decode step, but it only uses the `seq_lens` tensor (fixed batch, values change) and never the Python ints, so the layer compiles once. Look-alike of vllm-project/vllm#8821."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/issues/8821"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class PagedAttention(nn.Module):
    def __init__(self, max_len: int = 64) -> None:
        super().__init__()
        self.max_len = max_len

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        meta = _helpers_b.get_forward_context().attn_metadata
        valid = torch.arange(self.max_len)[None, :] < meta.seq_lens[:, None]
        weight = valid.to(q.dtype).sum(-1, keepdim=True) / self.max_len
        return q * weight


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 8)
        self.attn = PagedAttention()
        self.o_proj = nn.Linear(8, 8)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.o_proj(self.attn(self.qkv(hidden)))


def build() -> nn.Module:
    return DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    seq_lens = torch.tensor([5 + 4 * i, 3 + 4 * i])
    meta = _helpers_b.DecodeMetadata(num_decode_tokens=2, max_decode_seq_len=5 + 4 * i, seq_lens=seq_lens)
    with _helpers_b.set_forward_context(meta), torch.no_grad():
        model(torch.randn(2, 8))
