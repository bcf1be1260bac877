"""Clean: the same static-cache decode loop, but the cache layers are allocated ahead of time with `early_initialization(batch, heads, head_dim, dtype)` before the first compiled call, so the compiled forward only writes into existing tensors with `index_copy_` at a tensor `cache_position` and never re-assigns the initialised flag: one graph for the whole decode. The fix named in huggingface/transformers#42467 (call `early_initialization` ahead of time when tracing)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import StaticCache, TinyCausalLM

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/42467"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = TinyCausalLM(max_len=16)
        self.cache = StaticCache(num_layers=2, max_cache_len=16)
        self.cache.early_initialization(batch=1, heads=2, head_dim=4, dtype=torch.float32)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids, self.cache, cache_position)


def build() -> nn.Module:
    return Generator().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    if i == 4:  # second request: reuse the allocated cache
        model.cache.reset()
    token = torch.tensor([[i % 16]])
    logits = model(token, torch.tensor([i % 4]))
    logits.argmax(-1)
