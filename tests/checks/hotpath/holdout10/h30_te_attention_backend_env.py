"""Hazard: Transformer Engine's `DotProductAttention` picks its backend on every call by reading the `NVTE_FLASH_ATTN` / `NVTE_FUSED_ATTN` / `NVTE_UNFUSED_ATTN` environment variables inside the compiled forward; a benchmark that sweeps backends in one process by exporting those variables for each configuration between iterations makes the compiled layer recompile for each setting (the guards are on `os.environ`). From NVIDIA/TransformerEngine#3189 (make get_attention_backend traceable: flipping the env vars must recompile)."""
from __future__ import annotations

import os

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import get_attention_backend

LABEL = "env"
SOURCE = "https://github.com/NVIDIA/TransformerEngine/pull/3189"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}

_ENV_KEYS = ("NVTE_FLASH_ATTN", "NVTE_FUSED_ATTN", "NVTE_UNFUSED_ATTN")
_ALL_ON = {"NVTE_FLASH_ATTN": "1", "NVTE_FUSED_ATTN": "1", "NVTE_UNFUSED_ATTN": "1"}
_NO_FLASH = {**_ALL_ON, "NVTE_FLASH_ATTN": "0"}
_UNFUSED_ONLY = {**_NO_FLASH, "NVTE_FUSED_ATTN": "0"}
SWEEP = [_ALL_ON, _ALL_ON, _NO_FLASH, _NO_FLASH, _UNFUSED_ONLY, _UNFUSED_ONLY, _ALL_ON, _ALL_ON]  # exported per config


class DotProductAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = (t.view(b, s, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        use_flash, use_fused, _ = get_attention_backend()
        if use_flash or use_fused:
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # UnfusedDotProductAttention
            scores = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
            mask = torch.ones(s, s, dtype=torch.bool).triu(1)
            out = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


def build() -> nn.Module:
    for key in _ENV_KEYS:
        os.environ.pop(key, None)
    return DotProductAttention()


def step(model: nn.Module, i: int) -> None:
    for key in _ENV_KEYS:  # the benchmark's backend sweep, one setting per iteration
        os.environ.pop(key, None)
    os.environ.update(SWEEP[i])
    try:
        with torch.no_grad():
            model(torch.randn(1, 6, 8))
    finally:
        if i == len(SWEEP) - 1:
            for key in _ENV_KEYS:
                os.environ.pop(key, None)
