"""Hazard: to work around a locked static cache, the compiled `model.forward` is warmed up with `generate(..., use_cache=False)` and then served with `use_cache=True`; the forward branches on the Python flag (`use_cache = use_cache if use_cache is not None else self.config.use_cache`, then writes the cache only when it is set), so switching the flag from the loop is a guard failure and the forward "still needs to warm-up again with `use_cache=True`". From huggingface/transformers#30351 (static cache locked after torch.compile with model.generate; the warm-up hack and its second warm-up)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_b import CachedSelfAttention, StaticCache

LABEL = "outside"
SOURCE = "https://github.com/huggingface/transformers/issues/30351"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Config:
    use_cache = True


class NoCache:
    """Stand-in used when `use_cache=False`: attention sees only the current keys/values."""

    def update(self, key_states, value_states, layer_idx, cache_position):
        return key_states, value_states


class TinyLlama(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8, max_len: int = 16) -> None:
        super().__init__()
        self.config = Config()
        self.max_len = max_len
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(CachedSelfAttention(dim, 2, i) for i in range(2))
        self.lm_head = nn.Linear(dim, vocab)
        self.cache = StaticCache(num_layers=2, max_cache_len=max_len)
        self.cache.early_initialization(batch=1, heads=2, head_dim=4, dtype=torch.float32)
        self._no_cache = NoCache()

    def forward(self, input_ids, cache_position, use_cache: bool | None = None):
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        x = self.embed_tokens(input_ids)
        if use_cache:
            cache = self.cache
            mask = torch.arange(self.max_len)[None, :] <= cache_position[:, None]
        else:
            cache = self._no_cache
            mask = torch.ones(input_ids.shape[1], input_ids.shape[1], dtype=torch.bool).tril()
        for layer in self.layers:
            x = x + layer(x, cache, cache_position, mask)
        return self.lm_head(x)


def build() -> nn.Module:
    return TinyLlama().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    warmup = i < 3
    if i == 3:
        model.cache.reset()
    pos = i % 3 if warmup else i - 3
    model(torch.tensor([[i % 16]]), torch.tensor([pos]), use_cache=not warmup)
