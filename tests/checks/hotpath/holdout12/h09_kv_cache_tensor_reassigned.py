"""Hazard: a decoder keeps its KV cache as a plain tensor attribute, writes the new step into it inside the compiled forward with `self.cache[pos] = ...` where `pos` is a 0-d integer tensor, and the serving loop resets the cache between requests by assigning a fresh tensor; indexing with the 0-d tensor makes Dynamo specialize on `pos.item()`, so every new position recompiles (the reassigned cache itself does not). From pytorch/pytorch#115774 (torch.compile silently producing wrong output when mutating attributes/buffers)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "tensor-index"
SOURCE = "https://github.com/pytorch/pytorch/issues/115774"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)


class CachedDecoder(nn.Module):
    def __init__(self, max_len: int = 4) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.cache = torch.zeros(max_len, 8)

    def reset_cache(self) -> None:
        self.cache = torch.zeros_like(self.cache)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        self.cache[pos] = self.proj(x)
        return self.cache.sum(0)


def build() -> nn.Module:
    return CachedDecoder()


def step(model: nn.Module, i: int) -> None:
    if i % 2 == 0:
        model.reset_cache()  # new request
    with torch.no_grad():
        model(torch.randn(8), torch.tensor(i % 4))
