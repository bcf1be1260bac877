"""Clean: the same decoder RMSNorm, but the FlashInfer-style JIT module is resolved once when the layer is built (the filesystem check runs eagerly in `__init__`) and forward only calls the kernel function it kept, so the compiled forward never reaches `Path.exists`/`os.stat`. Twin of h42, from flashinfer-ai/flashinfer#2733 (looking the JIT module up inside the compiled call hit the untraceable `posix.stat`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15 import _helpers_c as flashinfer

LABEL = None
SOURCE = "https://github.com/flashinfer-ai/flashinfer/issues/2733"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self._rmsnorm = flashinfer.get_norm_module().rmsnorm  # module lookup (and its os.stat) happens here, once

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._rmsnorm(x, self.weight, self.eps)


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.SiLU(), nn.Linear(16, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.input_layernorm(x))


def build() -> nn.Module:
    return DecoderLayer()


_x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(_x)
