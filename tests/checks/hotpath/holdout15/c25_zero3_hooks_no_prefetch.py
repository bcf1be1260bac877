"""Clean: DeepSpeed ZeRO-3-style gather/release hooks on a submodule inside the compiled block, with the weight always released between calls (no prefetch outside the block), so every call enters the compiled region with the same partitioned `empty(0)` parameter and `NOT_AVAILABLE` status; the hooks are traced with the block, the gather and release happen inside it, and on torch 2.13 it compiles once and matches eager. Twin of h47, from deepspeedai/DeepSpeed#7951 (guards recorded against the gathered representation failed against the released one)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import gather_params, partition_param, release_params

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7951"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.15": {"compiles_over_8_steps": 5, "graph_breaks": 3}}  # 2.15 measured on the CPU-only machine (2.15.0+cu132)


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc(self.norm(x))


def build() -> nn.Module:
    block = Block()
    partition_param(block.fc.weight)
    block.fc.register_forward_pre_hook(gather_params)
    block.fc.register_forward_hook(release_params)
    return block


_x = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(_x)
