"""Clean: the rotary frequency table is precomputed in __init__ and registered as a (non-persistent) buffer, so forward only reads it. Look-alike of huggingface/diffusers#13792 (the reviewer's suggested fix: precompute the freqs in __init__ as buffers, as Wan does)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/13792"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RotaryBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        freqs = 1.0 / (10000 ** (torch.arange(0, 8, dtype=torch.float32) / 8))
        self.register_buffer("freqs", freqs, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) * torch.cos(self.freqs)


def build() -> nn.Module:
    return RotaryBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
