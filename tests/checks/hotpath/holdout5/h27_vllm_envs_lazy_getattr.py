"""Hazard: the compiled forward reads a flag through a vLLM-style lazy `envs` object whose attributes call os.environ.get on every access; when a test harness flips the variable between calls, Dynamo recompiles on the environment value. From vllm-project/vllm#10237 ([1/N] torch.compile user interface design: read env vars once at model init, not at forward time)."""
from __future__ import annotations

import os

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = "env"
SOURCE = "https://github.com/vllm-project/vllm/pull/10237"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class RMSNorm(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        if _helpers_b.envs.VLLM_FUSED_RESIDUAL:
            x = x + residual
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return normed + residual


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Linear(8, 8)
        self.post_attention_layernorm = RMSNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.post_attention_layernorm(self.mlp(x), x)


def build() -> nn.Module:
    os.environ.pop("VLLM_FUSED_RESIDUAL", None)
    return DecoderLayer()


def step(model: nn.Module, i: int) -> None:
    # A/B benchmark loop toggling the fused path without rebuilding the engine
    os.environ["VLLM_FUSED_RESIDUAL"] = "1" if i % 2 else "0"
    try:
        with torch.no_grad():
            model(torch.randn(4, 8))
    finally:
        if i == 7:
            os.environ.pop("VLLM_FUSED_RESIDUAL", None)
