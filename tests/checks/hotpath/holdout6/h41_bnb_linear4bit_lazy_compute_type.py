"""Hazard: a QLoRA-style MLP built from bitsandbytes `Linear4bit` layers decides its compute dtype lazily: the first forward calls `set_compute_type(x)` and flips `self.compute_type_is_set = True` inside the compiled region, so the second call fails the guard on that flag and the whole forward is recompiled. From bitsandbytes-foundation/bitsandbytes#1184 (torch compile support? setattr on compute_dtype in Linear4bit.forward)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import Linear4bit

LABEL = "assigned"
SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1184"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class QuantizedMLP(nn.Module):
    """What `BitsAndBytesConfig(load_in_4bit=True)` without a compute dtype leaves in a small decoder MLP."""

    def __init__(self, dim: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.up_proj = Linear4bit(dim, hidden)
        self.down_proj = Linear4bit(hidden, dim)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.up_proj(x)))


def build() -> nn.Module:
    return QuantizedMLP()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
