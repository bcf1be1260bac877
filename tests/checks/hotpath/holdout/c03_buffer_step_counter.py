"""Clean: the cache position is a registered tensor buffer advanced in place inside forward, not a Python int. Look-alike of huggingface/transformers#29114 (the fix: `self.seen_tokens = torch.tensor(0)` instead of an int)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/29114"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k_proj = nn.Linear(8, 8)
        self.register_buffer("keys", torch.zeros(16, 8))
        self.register_buffer("seen_tokens", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pos = self.seen_tokens.reshape(1)
        self.keys.index_copy_(0, pos, self.k_proj(x))
        self.seen_tokens.add_(1)
        return x @ self.keys.t()


def build() -> nn.Module:
    return Decoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 8))
