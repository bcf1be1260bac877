"""Clean: the fix from huggingface/transformers#46421: when the prefill will run compiled (chunked prefill), `generate()` calls `cache.early_initialization(...)` eagerly before the first forward, so every compiled chunk sees an already-allocated cache and the frame compiles once."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14.h07_hf_static_cache_lazy_init import LlamaModel, StaticCache

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/issues/46421"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def early_initialization(cache: StaticCache, batch_size: int, num_heads: int, head_dim: int, dtype) -> None:
    """What `_prepare_static_cache` now does before a compiled prefill: allocate every layer up front."""
    for layer in cache.layers:
        layer.lazy_initialization(torch.zeros(batch_size, num_heads, 0, head_dim, dtype=dtype))


def build() -> nn.Module:
    return LlamaModel()


_caches: dict = {}


def step(model: nn.Module, i: int) -> None:
    prompt_len, chunk = 8, 2
    start = (i * chunk) % prompt_len
    if start == 0:
        cache = StaticCache(num_layers=len(model.layers), max_cache_len=16)
        early_initialization(cache, batch_size=1, num_heads=2, head_dim=4, dtype=torch.float32)
        _caches["cache"] = cache
    ids = torch.arange(start, start + chunk).view(1, -1) % 32
    with torch.no_grad():
        model(ids, _caches["cache"], torch.arange(start, start + chunk))
