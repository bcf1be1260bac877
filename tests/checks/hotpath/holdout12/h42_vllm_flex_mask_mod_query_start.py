"""Hazard: the vLLM flex-attention backend used by the torchtitan RL generator rebuilds its `mask_mod` closure every step in the model runner, closing over the Python ints `query_start`/`num_tokens` of the new rollout batch; the compiled attention calls that closure, so each new query length fails the guard on the closure cells and recompiles until the recompile limit. From pytorch/torchtitan#3898 (Flex-attention generator crashes with "Dynamo recompile limit exceeded")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/torchtitan/issues/3898"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


@dataclass
class FlexAttentionMetadata:
    num_actual_tokens: int
    mask_mod: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def build_metadata(query_start: int, num_tokens: int) -> FlexAttentionMetadata:
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
    # each rollout step: 4 new tokens appended after a prompt that grows by one token per step
    query_start = 4 + i
    model.attn_metadata = build_metadata(query_start=query_start, num_tokens=4)
    with torch.no_grad():
        model(torch.randn(4, 8), torch.zeros(query_start, 8))
