"""Hazard: GPT-OSS style per-TransformerBlock compile where blocks alternate between sliding-window and full attention through a per-instance `sliding_window` attribute; all blocks share one forward code object, so each new attribute value fails the guard and recompiles, and with more per-layer variants the recompile limit is hit. From pytorch/torchtitan#3737 (raise GPT-OSS Dynamo recompile limit: sliding-window attention adds extra variants)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/torchtitan/pull/3737"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
REGION = "layers.*"


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, sliding_window: int | None) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.wo = nn.Linear(dim, dim)
        self.sliding_window = sliding_window

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        pos = torch.arange(x.shape[0])
        mask = pos[None, :] <= pos[:, None]
        if self.sliding_window is not None:
            mask = mask & (pos[:, None] - pos[None, :] < self.sliding_window)
        scores = (q @ k.t()).masked_fill(~mask, float("-inf"))
        return x + self.wo(scores.softmax(-1) @ v)


class GptOss(nn.Module):
    def __init__(self, dim: int = 8, n_layers: int = 4, window: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleDict(
            {str(i): TransformerBlock(dim, window if i % 2 == 0 else None) for i in range(n_layers)}
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for layer in self.layers.values():
            h = layer(h)
        return h


def build() -> nn.Module:
    return GptOss()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(6, 8)).sum().backward()
