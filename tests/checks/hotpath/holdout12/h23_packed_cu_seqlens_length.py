"""Hazard: a packed-sequence (varlen) SFT step feeds the compiled attention a `cu_seq_lens` tensor whose length is the number of samples packed into the batch, which changes from batch to batch, so its size guard fails and Dynamo recompiles (then marks it dynamic). From InternLM/xtuner#1081 (pad cu_seq_lens to avoid torch recompile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_b import pack_sequences

LABEL = "shape"
SOURCE = "https://github.com/InternLM/xtuner/pull/1081"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

PACK_TO = 16  # tokens per packed batch
PACKS = [[5, 11], [3, 4, 9], [16], [2, 2, 6, 6], [7, 9], [1, 5, 10], [8, 8], [4, 4, 4, 4]]


class VarlenAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, cu_seq_lens: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        tokens = torch.arange(hidden_states.shape[0], device=hidden_states.device)
        seq_id = torch.bucketize(tokens, cu_seq_lens[1:], right=True)
        same_seq = (seq_id[:, None] == seq_id[None, :]) & (tokens[:, None] >= tokens[None, :])
        scores = (q @ k.t()).masked_fill(~same_seq, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ v)


class PackedDecoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = VarlenAttention(dim)
        self.lm_head = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, cu_seq_lens: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden_states + self.attn(hidden_states, cu_seq_lens))


def build() -> nn.Module:
    return PackedDecoder()


def step(model: nn.Module, i: int) -> None:
    hidden_states, cu_seq_lens = pack_sequences(PACKS[i])
    model(hidden_states, cu_seq_lens).sum().backward()
