"""Hazard: the attention wrapper builds its `_local_map_fn` lazily on first forward, so the compiled frame first sees `None` then a callable and compiles twice (an attribute assigned inside the region). From pytorch/torchtitan#2823 (the None -> callable transition of LocalMapInnerAttention)."""

from __future__ import annotations

import functools

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/torchtitan/pull/2823"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1) @ v


class LocalMapInnerAttention(nn.Module):
    def __init__(self, head_dim: int = 8) -> None:
        super().__init__()
        self.head_dim = head_dim
        self._local_map_fn = None

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self._local_map_fn is None:
            self._local_map_fn = functools.partial(_sdpa, scale=self.head_dim**-0.5)
        return self._local_map_fn(q, k, v)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wqkv = nn.Linear(8, 24)
        self.inner_attention = LocalMapInnerAttention()
        self.wo = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.wqkv(x).chunk(3, dim=-1)
        return x + self.wo(self.inner_attention(q, k, v))


def build() -> nn.Module:
    return Block()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
