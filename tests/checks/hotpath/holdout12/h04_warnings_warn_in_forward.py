"""Hazard: a model's forward emits a `warnings.warn(...)` deprecation notice whenever the caller still passes the old `head_mask` argument; Python's `_warnings.warn` builtin is not traceable, so every compiled forward graph-breaks there. From pytorch/pytorch#135688 (Graph break due to unsupported Python builtin _warnings.warn)."""
from __future__ import annotations

import warnings

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/135688"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class EncoderBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, hidden_states: torch.Tensor, head_mask: torch.Tensor | None = None) -> torch.Tensor:
        if head_mask is not None:
            warnings.warn(
                "`head_mask` is deprecated and will be removed in v5; it is ignored.", FutureWarning, stacklevel=2
            )
        return hidden_states + self.ffn(self.norm(hidden_states))


def build() -> nn.Module:
    return EncoderBlock()


def step(model: nn.Module, i: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model(torch.randn(2, 8), head_mask=torch.ones(2, 8)).sum().backward()
