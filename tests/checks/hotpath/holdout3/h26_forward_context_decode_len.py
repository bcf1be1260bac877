"""Hazard: attention reads `max_decode_seq_len` (a Python int the model runner sets in a global forward context before every decode step) to size its scratch buffer, so each new decode length fails a guard and the decoder layer recompiles per token. From vllm-project/vllm#8821 (recompiles on `attn_metadata` ints; see also pytorch/pytorch#132849)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = "outside"
SOURCE = "https://github.com/vllm-project/vllm/issues/8821"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class PagedAttention(nn.Module):
    def __init__(self, block_size: int = 4) -> None:
        super().__init__()
        self.block_size = block_size

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        meta = _helpers_b.get_forward_context().attn_metadata
        num_blocks = (meta.max_decode_seq_len + self.block_size - 1) // self.block_size
        scratch = torch.zeros(q.shape[0], num_blocks * self.block_size)
        return q * torch.sigmoid(scratch.sum(-1, keepdim=True) + 1.0)


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
    meta = _helpers_b.DecodeMetadata(num_decode_tokens=2, max_decode_seq_len=5 + 4 * i)
    with _helpers_b.set_forward_context(meta), torch.no_grad():
        model(torch.randn(2, 8))
