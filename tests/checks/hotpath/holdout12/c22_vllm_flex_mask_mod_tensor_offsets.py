"""Clean: the same flex-attention runner rebuilds its `mask_mod` closure every step, but it closes over 0-dim tensors (`query_start`, `num_tokens`) and attends over a preallocated fixed-size KV cache, so the new closure each step carries no Python int for Dynamo to guard on and the attention compiles once. Look-alike of pytorch/torchtitan#3898."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/torchtitan/issues/3898"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
MAX_MODEL_LEN = 16


@dataclass
class FlexAttentionMetadata:
    num_actual_tokens: torch.Tensor
    mask_mod: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def build_metadata(query_start: torch.Tensor, num_tokens: torch.Tensor) -> FlexAttentionMetadata:
    def causal_mask_mod(q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        return (q_idx + query_start >= kv_idx) & (kv_idx < query_start + num_tokens)

    return FlexAttentionMetadata(num_actual_tokens=num_tokens, mask_mod=causal_mask_mod)


class FlexAttentionImpl(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.attn_metadata: FlexAttentionMetadata | None = None

    def forward(self, hidden: torch.Tensor, kv_cache: torch.Tensor) -> torch.Tensor:
        meta = self.attn_metadata
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        keys = torch.cat([kv_cache, k], dim=0)
        values = torch.cat([kv_cache, v], dim=0)
        q_idx = torch.arange(q.shape[0]).unsqueeze(1)
        kv_idx = torch.arange(keys.shape[0]).unsqueeze(0)
        mask = meta.mask_mod(q_idx, kv_idx)
        scores = (q @ keys.t()).masked_fill(~mask, float("-inf"))
        return self.out(torch.softmax(scores, dim=-1) @ values)


def build() -> nn.Module:
    return FlexAttentionImpl()


def step(model: nn.Module, i: int) -> None:
    query_start = 4 + i
    model.attn_metadata = build_metadata(query_start=torch.tensor(query_start), num_tokens=torch.tensor(4))
    kv_cache = torch.zeros(MAX_MODEL_LEN, 8)  # preallocated; only the first query_start rows are live
    with torch.no_grad():
        model(torch.randn(4, 8), kv_cache)
