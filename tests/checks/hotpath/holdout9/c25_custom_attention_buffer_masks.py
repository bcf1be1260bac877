"""Clean: the same local attention layer, but the relative-position masks are built once in `__init__` for the fixed token budget and registered as buffers, and each clip's object tokens are padded to that budget, so the compiled forward only reads buffers and compiles once. Look-alike of pytorch/pytorch#121504."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/121504"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "attn"
MAX_TOKENS = 10


class MultiheadLocalAttention(nn.Module):
    def __init__(self, dim: int = 8, window: int = 2) -> None:
        super().__init__()
        self.window = window
        self.qkv = nn.Linear(dim, 3 * dim)
        idx = torch.arange(MAX_TOKENS)
        local_mask = (idx[:, None] - idx[None, :]).abs() <= self.window
        self.register_buffer("local_mask", local_mask, persistent=False)
        self.register_buffer("qk_mask", torch.zeros(MAX_TOKENS, MAX_TOKENS).masked_fill(~local_mask, float("-inf")), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
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
    tokens = torch.zeros(MAX_TOKENS, 8)
    tokens[:n] = torch.randn(n, 8)  # pad to the fixed token budget
    with torch.no_grad():
        model(tokens)
