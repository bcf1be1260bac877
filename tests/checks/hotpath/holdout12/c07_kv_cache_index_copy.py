"""Clean: the same KV-cached decoder writes the new step with `index_copy_` along dim 0 using the 0-d position tensor reshaped to an index vector, so the position stays data (no `pos.item()` specialization); the serving loop still resets the cache in place between requests and the forward compiles once. Look-alike of pytorch/pytorch#115774 (torch.compile silently producing wrong output when mutating attributes/buffers)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/115774"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class CachedDecoder(nn.Module):
    def __init__(self, max_len: int = 4) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.cache = torch.zeros(max_len, 8)

    def reset_cache(self) -> None:
        self.cache.zero_()

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.cache.index_copy_(0, pos.view(1), self.proj(x).view(1, -1))
        return self.cache.sum(0)


def build() -> nn.Module:
    return CachedDecoder()


def step(model: nn.Module, i: int) -> None:
    if i % 2 == 0:
        model.reset_cache()  # new request
    with torch.no_grad():
        model(torch.randn(8), torch.tensor(i % 4))
