"""Hazard: a Megatron-style core attention decides between the fused (flash) path and the unfused softmax path by reading `os.environ.get("NVTE_FLASH_ATTN")` inside forward, and the run flips the variable (an A/B check of the attention backend mid-run). Reported as a Dynamo limitation for Megatron (os.environ.get in the traced code); on torch 2.13 the read, made through `os.environ` as a global of the helper module, is guarded on its value, so each flip of the variable is a guard failure: one recompile for the second value, then the two graphs alternate. From pytorch/pytorch#132085 ([Dynamo][Megatron] Supports os.environ.get; the review asked for guards on the value that is read)."""
from __future__ import annotations

import os

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import flash_attn_enabled

LABEL = "env"
SOURCE = "https://github.com/pytorch/pytorch/pull/132085"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class CoreAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(hidden).chunk(3, dim=-1)
        if flash_attn_enabled():
            ctx = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-1, -2)) * self.scale
            ctx = torch.softmax(scores, dim=-1) @ v  # unfused path, no causal mask
        return self.dense(ctx)


def build() -> nn.Module:
    os.environ["NVTE_FLASH_ATTN"] = "1"
    return CoreAttention()


_x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    os.environ["NVTE_FLASH_ATTN"] = "1" if i % 2 == 0 else "0"
    try:
        with torch.no_grad():
            model(_x)
    finally:
        os.environ["NVTE_FLASH_ATTN"] = "1"
