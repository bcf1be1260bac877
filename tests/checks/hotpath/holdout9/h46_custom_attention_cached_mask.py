"""Hazard: a video-segmentation attention layer caches its relative-position mask in plain tensor attributes (`self.qk_mask`, `self.local_mask`) that it rebuilds whenever the query size changes; Dynamo guards on the identity of those non-buffer tensors, so every rebuilt mask recompiles the layer. From pytorch/pytorch#121504 (custom attention recompilations, ___check_obj_id(L['self'].qk_mask))."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/pytorch/issues/121504"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 0}
REGION = "attn"


class MultiheadLocalAttention(nn.Module):
    def __init__(self, dim: int = 8, window: int = 2) -> None:
        super().__init__()
        self.window = window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.qk_mask = None
        self.local_mask = None
        self.mask_size = None

    def _build_masks(self, n: int) -> None:
        idx = torch.arange(n)
        self.local_mask = (idx[:, None] - idx[None, :]).abs() <= self.window
        self.qk_mask = torch.zeros(n, n).masked_fill(~self.local_mask, float("-inf"))
        self.mask_size = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if self.mask_size != x.shape[0]:
            self._build_masks(x.shape[0])
        return torch.softmax(q @ k.t() + self.qk_mask, dim=-1) @ v


class Tracker(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = MultiheadLocalAttention()
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.attn(x))


def build() -> nn.Module:
    return Tracker()


def step(model: nn.Module, i: int) -> None:
    # each video clip has its own number of object tokens; the layer sees a new size every few clips
    n = [6, 6, 8, 8, 6, 10, 10, 6][i]
    with torch.no_grad():
        model(torch.randn(n, 8))
