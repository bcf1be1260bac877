"""Hazard: padding-free (packed) attention derives `cu_seq_lens` and `max_length` from `position_ids` inside the forward with `.max().item()`, a data-dependent scalar that graph-breaks the compiled layer, and the resumed frame then guards on each new `max_length`. From huggingface/trl#2158 (graph breaks in the padding-free branch of DataCollatorForCompletionOnlyLM)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/trl/pull/2158"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


def prepare_fa2_from_position_ids(position_ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    flat = position_ids.flatten()
    starts = torch.nonzero(flat == 0).flatten()
    cu_seq_lens = torch.cat([starts.to(torch.int32), torch.tensor([flat.numel()], dtype=torch.int32)])
    max_length = int(position_ids.max().item()) + 1
    return cu_seq_lens, max_length


class PackedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.o = nn.Linear(8, 8)

    def forward(self, hidden: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        cu_seq_lens, max_length = prepare_fa2_from_position_ids(position_ids)
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) / max_length**0.5, dim=-1)
        return self.o(att @ v)


def build() -> nn.Module:
    return PackedAttention()


def step(model: nn.Module, i: int) -> None:
    # the collator packs two examples into one row; lengths vary per batch
    first = 3 + i % 3
    position_ids = torch.cat([torch.arange(first), torch.arange(12 - first)]).unsqueeze(0)
    with torch.no_grad():
        model(torch.randn(1, 12, 8), position_ids)
