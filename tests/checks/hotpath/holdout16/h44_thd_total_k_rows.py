"""Hazard: with THD sequence packing every micro-batch packs a different number of key rows, and the compiled CSA compact-indexer layout helper is called with that host-side `total_k_rows` int and a key tensor of that many rows; the first new size fails the shape/int guards and Dynamo recompiles (then goes dynamic). From NVIDIA/Megatron-LM#7340 (DeepSeek-V4 CSA on packed THD: "`total_k_rows` will change every for every samples and will trigger a host-side Dynamo recompiles"; the reporter later found the 10x slowdown came mainly from JIT kernel keys, fixed in #7343)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_c import build_thd_compact_k_layout

LABEL = "shape"
SOURCE = "https://github.com/NVIDIA/Megatron-LM/issues/7340"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class CompactKIndexer(nn.Module):
    """Packs the THD keys of a micro-batch into per-sequence compact blocks and scores them."""

    def __init__(self, dim: int = 8, block: int = 4) -> None:
        super().__init__()
        self.block = block
        self.k_proj = nn.Linear(dim, dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, keys: torch.Tensor, cu_seqlens_k: torch.Tensor, total_k_rows: int) -> torch.Tensor:
        slots = build_thd_compact_k_layout(cu_seqlens_k, total_k_rows, self.block)
        packed = torch.zeros(int(cu_seqlens_k.numel() - 1) * self.block, keys.shape[-1])
        packed = packed.index_add(0, slots, self.k_proj(keys))
        return self.score(packed).squeeze(-1)


_LENGTHS = [(5, 7, 8), (6, 6, 9), (4, 9, 8), (7, 7, 7), (5, 8, 9), (6, 9, 6), (8, 8, 5), (4, 7, 9)]


def build() -> nn.Module:
    return CompactKIndexer()


def step(model: nn.Module, i: int) -> None:
    lengths = torch.tensor(_LENGTHS[i])
    cu_seqlens_k = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    total_k_rows = int(lengths.sum())  # host-side, changes with every packed micro-batch
    model(torch.randn(total_k_rows, 8), cu_seqlens_k, total_k_rows).sum().backward()
