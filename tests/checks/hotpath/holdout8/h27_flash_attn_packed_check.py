"""Hazard: a padding-free SFT run (batch size 1, no attention mask, per-token `position_ids` that restart at every packed example) compiles a decoder whose flash-attention dispatch asks `_is_packed_sequence(position_ids, batch_size)`; the answer is a 0-d tensor used in a Python `if`, so every call graph-breaks on it. From huggingface/transformers#41827 ([Flash Attention] Disable packed sequences with pos ids only during torch compile: before, no full graph and recompilations for bsz 1)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import flash_attention_forward

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/pull/41827"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 2}

PACKINGS = [(3, 5), (8,), (2, 6), (4, 4), (1, 7), (5, 3), (8,), (6, 2)]  # example lengths packed in each 8-token row


class FlashAttnDecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, position_ids: torch.Tensor, attention_mask=None) -> torch.Tensor:
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        attn = flash_attention_forward(q, k, v, attention_mask=attention_mask, position_ids=position_ids)
        hidden = hidden + self.o_proj(attn)
        return hidden + self.mlp(torch.relu(hidden))


def build() -> nn.Module:
    return FlashAttnDecoderLayer()


def step(model: nn.Module, i: int) -> None:
    # DataCollatorWithFlattening: one row, no mask, position ids restart per example
    position_ids = torch.cat([torch.arange(n) for n in PACKINGS[i]]).unsqueeze(0)
    model(torch.randn(1, 8, 8), position_ids).mean().backward()
