"""Hazard: the decoder's RMSNorm calls a FlashInfer-style op that looks its JIT module up on every call (`get_norm_module()` -> `gen_norm_module().build_and_load()` -> `JitSpec.is_aot` -> `aot_path.exists()`), so the compiled forward hits `os.stat`, which Dynamo cannot trace, and breaks the graph at every norm. From flashinfer-ai/flashinfer#2733 (JIT-backed flashinfer functions fail under torch.compile: `Dynamo does not know how to trace the builtin posix.stat` from `get_norm_module() -> gen_norm_module().build_and_load() -> JitSpec.is_aot -> aot_path.exists() -> os.stat()`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15 import _helpers_c as flashinfer

LABEL = "graph-break"
SOURCE = "https://github.com/flashinfer-ai/flashinfer/issues/2733"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 3}


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return flashinfer.rmsnorm(x, self.weight, self.eps)


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
