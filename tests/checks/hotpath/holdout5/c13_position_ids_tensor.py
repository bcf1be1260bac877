"""Clean: the decode loop advances the position every token, but passes it into the compiled forward as a `position_ids` tensor instead of a Python int `pos`, so nothing is specialised per position and the block compiles once. From m87-labs/moondream#231 (replace pos (int) with position_ids (tensor) in the inference code)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/m87-labs/moondream/pull/231"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class DecoderBlock(nn.Module):
    def __init__(self, max_len: int = 16) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.out = nn.Linear(8, 8)
        self.register_buffer("k_cache", torch.zeros(1, max_len, 8), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, max_len, 8), persistent=False)
        self.register_buffer("freqs", torch.linspace(0.0, 1.0, max_len), persistent=False)

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        rot = torch.cos(self.freqs[position_ids]).unsqueeze(-1)
        self.k_cache.index_copy_(1, position_ids, k * rot)
        self.v_cache.index_copy_(1, position_ids, v)
        mask = torch.arange(self.k_cache.shape[1]) <= position_ids.max()
        scores = (q @ self.k_cache.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return self.out(torch.softmax(scores, dim=-1) @ self.v_cache)


def build() -> nn.Module:
    return DecoderBlock()


def step(model: nn.Module, i: int) -> None:
    pos = 4 + i  # the loop still counts positions, in Python, outside the compiled region
    with torch.no_grad():
        model(torch.randn(1, 1, 8), torch.tensor([pos]))
