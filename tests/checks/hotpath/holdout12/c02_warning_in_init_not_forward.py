"""Clean: the same encoder block validates the deprecated `head_mask` option once in `__init__` (outside the compiled region) and warns there, so the compiled forward only does tensor work and traces once with no graph break. Look-alike of pytorch/pytorch#135688 (Graph break due to unsupported Python builtin _warnings.warn)."""
from __future__ import annotations

import warnings

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/135688"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 8, use_head_mask: bool = False) -> None:
        super().__init__()
        if use_head_mask:
            warnings.warn("`head_mask` is deprecated and will be removed in v5; it is ignored.", FutureWarning)
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.ffn(self.norm(hidden_states))


def build() -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return EncoderBlock(use_head_mask=True)


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 8)).sum().backward()
