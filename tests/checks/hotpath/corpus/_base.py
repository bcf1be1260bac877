"""Shared pieces of the corpus cases: a fixed-shape inference step and a tiny projection module."""
from __future__ import annotations

import torch
from torch import nn


def step(model: nn.Module, i: int) -> torch.Tensor:
    """One inference step on a fixed-shape input (so shapes never cause recompiles)."""
    gen = torch.Generator().manual_seed(i)
    with torch.no_grad():
        return model(torch.randn(2, 8, generator=gen))


class Proj(nn.Module):
    """Base for cases: one Linear, compiled as the region (the case overrides forward)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
