"""Clean: the same QLoRA-style MLP of bitsandbytes `Linear4bit` layers, but the loader passes `compute_dtype` to the constructor (as `BitsAndBytesConfig(bnb_4bit_compute_dtype=...)` does), so `compute_type_is_set` is True from `__init__`, `set_compute_type` never runs in the compiled forward and nothing is assigned there. From bitsandbytes-foundation/bitsandbytes#1184."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import Linear4bit

LABEL = None
SOURCE = "https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1184"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class QuantizedMLP(nn.Module):
    def __init__(self, dim: int = 8, hidden: int = 16, compute_dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.up_proj = Linear4bit(dim, hidden, compute_dtype=compute_dtype)
        self.down_proj = Linear4bit(hidden, dim, compute_dtype=compute_dtype)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.up_proj(x)))


def build() -> nn.Module:
    return QuantizedMLP(compute_dtype=torch.float32)


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
