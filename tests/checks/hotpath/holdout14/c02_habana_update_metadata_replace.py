"""Clean: vllm-fork's HPU model runner compiles `_update_metadata`, which rebuilds the attention metadata with `NamedTuple._replace(block_mapping=..., attn_bias=...)`; the report graph-broke on `_replace` (Dynamo refused to inline it), but torch 2.13 traces `_replace` on a named tuple, so the compiled step runs as one graph, once. From HabanaAI/vllm-fork#1311 (torch.compile _update_metadata; graph breaks from tuple _replace, same as #1143)."""
from __future__ import annotations

from typing import NamedTuple, Optional

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/1311"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TrimmedAttentionMetadata(NamedTuple):
    attn_bias: Optional[torch.Tensor]
    block_list: torch.Tensor
    block_mapping: Optional[torch.Tensor]
    block_groups: torch.Tensor


class HpuModelAdapter(nn.Module):
    def __init__(self, block_size: int = 4, num_blocks: int = 8) -> None:
        super().__init__()
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.model = nn.Linear(8, 8)

    def _set_block_mapping(self, metadata: TrimmedAttentionMetadata, batch_size: int, dtype: torch.dtype):
        mask = torch.arange(0, self.block_size, dtype=torch.int32).view(1, -1)
        mask = mask >= metadata.block_groups.unsqueeze(-1)
        attn_bias = torch.zeros_like(mask, dtype=dtype).masked_fill_(mask, -3e38)
        block_mapping = nn.functional.one_hot(metadata.block_groups.clamp(0, batch_size - 1), num_classes=batch_size)
        return metadata._replace(block_mapping=block_mapping.to(dtype), attn_bias=attn_bias)

    def _update_metadata(self, attn_metadata, batch_size, dtype):
        return self._set_block_mapping(attn_metadata, batch_size, dtype)

    def forward(self, input_ids_embeds, attn_metadata):
        attn_metadata = self._update_metadata(attn_metadata, input_ids_embeds.shape[0], input_ids_embeds.dtype)
        h = self.model(input_ids_embeds)
        return h + attn_metadata.block_mapping.sum() * 0 + attn_metadata.attn_bias.mean()


def build() -> nn.Module:
    return HpuModelAdapter()


def step(model: nn.Module, i: int) -> None:
    metadata = TrimmedAttentionMetadata(
        attn_bias=None,
        block_list=torch.arange(8),
        block_mapping=None,
        block_groups=torch.tensor([0, 0, 1, 1, 2, 2, 3, 3]),
    )
    with torch.no_grad():
        model(torch.randn(4, 8), metadata)
