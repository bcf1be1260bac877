"""Hazard: an aiter Triton GEMM wrapper picks its tuned config through `arch_info.get_arch()`, an `lru_cache`d function whose body asks the runtime driver for the current target; Dynamo does not reuse the cache, traces into the opaque runtime query and breaks the graph in every compiled layer that calls the op. From ROCm/aiter#2688 (fix torch.compile graph break in arch_info.get_arch())."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_c as arch_info

LABEL = "helper-module"
SOURCE = "https://github.com/ROCm/aiter/pull/2688"
OBSERVED = {"compiles_over_8_steps": 12, "graph_breaks": 4}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 13, "graph_breaks": 12}, "2.12": {"compiles_over_8_steps": 6, "graph_breaks": 5}}  # 2.11: measured on the H100 machine; 2.12 measured on the CPU-only machine (2.12.1+cu130)

_GEMM_CONFIGS = {"gfx942": {"BLOCK_K": 4}, "gfx950": {"BLOCK_K": 8}}


def gemm_a16w16(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    config = _GEMM_CONFIGS.get(arch_info.get_arch(), {"BLOCK_K": 8})
    block_k = config["BLOCK_K"]
    acc = torch.zeros(x.shape[0], w.shape[0])
    for k in range(0, x.shape[1], block_k):
        acc = acc + x[:, k:k + block_k] @ w[:, k:k + block_k].t()
    return acc


class AiterLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gemm_a16w16(x, self.weight)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate_up = AiterLinear(8, 8)
        self.down = AiterLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.silu(self.gate_up(x)))


def build() -> nn.Module:
    return MLP()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
