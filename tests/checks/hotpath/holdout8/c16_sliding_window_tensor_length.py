"""Clean: the same compiled sliding-window decoder, but its cache layer keeps `cumulative_length` as a 0-d tensor advanced in place, writes the ring slot with `index_copy_` and builds the validity mask from the tensor, so no Python int changes between decode steps and it compiles once. Look-alike of h29, from huggingface/transformers#46856 (use cumulative_length as a scalar tensor, without breaking the compile pipeline for StaticSlidingWindowLayer)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import TensorLengthSlidingWindowLayer

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/46856"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SlidingWindowAttention(nn.Module):
    def __init__(self, dim: int = 8, window: int = 4) -> None:
        super().__init__()
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.o_proj = nn.Linear(dim, dim)
        self.cache_layer = TensorLengthSlidingWindowLayer(max_cache_len=window, dim=dim)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        q = self.q_proj(hidden)
        keys, values = self.cache_layer.update(self.k_proj(hidden), self.v_proj(hidden))
        mask = self.cache_layer.valid_mask()
        scores = (q @ keys.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return hidden + self.o_proj(torch.softmax(scores, dim=-1) @ values)


def build() -> nn.Module:
    return SlidingWindowAttention().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 1, 8))
