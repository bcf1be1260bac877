"""Hazard: the paged-attention metadata dataclass carries `max_decode_seq_len` as a Python int that grows with every generated token, and the compiled attention sizes its scratch buffer from it, so the next-token call fails the guard on that int. From pytorch/pytorch#132849 (vLLM on CPU): Avoid recompilation for inputs integer number (`max_decode_seq_len` increases with number of next tokens)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/132849"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

MAX_MODEL_LEN = 32


@dataclass
class PagedAttentionMetadata:
    seq_lens_tensor: torch.Tensor
    max_decode_seq_len: int
    block_tables: torch.Tensor


class PagedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.register_buffer("key_cache", torch.randn(MAX_MODEL_LEN, 8))
        self.register_buffer("value_cache", torch.randn(MAX_MODEL_LEN, 8))

    def forward(self, x: torch.Tensor, attn_metadata: PagedAttentionMetadata) -> torch.Tensor:
        q, _, _ = self.qkv(x).chunk(3, dim=-1)
        max_len = attn_metadata.max_decode_seq_len
        logits = torch.empty(x.shape[0], max_len)  # scratch sized from the metadata int
        keys = self.key_cache[:max_len]
        logits.copy_(q @ keys.T)
        positions = torch.arange(max_len)
        logits = logits.masked_fill(positions[None, :] >= attn_metadata.seq_lens_tensor[:, None], float("-inf"))
        return torch.softmax(logits, dim=-1) @ self.value_cache[:max_len]


def build() -> nn.Module:
    return PagedAttention()


def step(model: nn.Module, i: int) -> None:
    seq_lens = torch.tensor([5 + i, 3 + i])
    meta = PagedAttentionMetadata(seq_lens, max_decode_seq_len=5 + i, block_tables=torch.zeros(2, 4, dtype=torch.long))
    with torch.no_grad():
        model(torch.randn(2, 8), meta)
