"""Clean: the layer reads the vLLM-style lazy `envs` flag once in __init__ and keeps it as a constant config bool, so the compiled forward never touches os.environ and the later toggling of the variable (which only affects new engines) costs nothing. From vllm-project/vllm#10237 ([1/N] torch.compile user interface design: only read env vars when the model is initialised)."""
from __future__ import annotations

import os

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/10237"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RMSNorm(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps
        self.fused_residual = bool(_helpers_b.envs.VLLM_FUSED_RESIDUAL)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        if self.fused_residual:
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
    os.environ["VLLM_FUSED_RESIDUAL"] = "1"
    try:
        return DecoderLayer()
    finally:
        os.environ.pop("VLLM_FUSED_RESIDUAL", None)


def step(model: nn.Module, i: int) -> None:
    os.environ["VLLM_FUSED_RESIDUAL"] = "1" if i % 2 else "0"
    try:
        with torch.no_grad():
            model(torch.randn(4, 8))
    finally:
        if i == 7:
            os.environ.pop("VLLM_FUSED_RESIDUAL", None)
