"""Hazard: DeepSpeed ZeRO-3-style partitioning on a submodule inside the compiled region: a forward pre-hook gathers the full weight into `param.data` and a forward hook releases it back to an empty tensor, flipping a Python `ds_status` string on the parameter around every call; on every other step the engine's prefetcher gathers the weight ahead of the call, so the compiled block is entered sometimes with the full `[8, 8]` weight and sometimes with the released `empty(0)` one, and the parameter's shape/status guards fail. From deepspeedai/DeepSpeed#7951 (ZeRO-3 parameters were temporarily all-gathered while Dynamo traced, so it recorded full sizes, and guard evaluation then saw the released `empty(0)` representation: `expected 4096, actual 0`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import gather_params, partition_param, release_params

LABEL = "pre-hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7951"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
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
    if i % 2 == 1:  # the parameter-coordinator prefetches the next module's weights before its forward
        gather_params(model.fc, ())
    with torch.no_grad():
        model(_x)
