"""Clean: the same DeepSpeed-engine style forward logs through a wrapper that returns early under `torch.compiler.is_compiling()` (the approach of deepspeedai/DeepSpeed#6496), so Dynamo never reaches the logger and the forward compiles as one graph."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_c import log_dist_unless_compiling

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/6496"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Engine(nn.Module):
    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module
        self.wall_clock_breakdown = False

    def forward(self, *inputs):
        if not self.wall_clock_breakdown:
            log_dist_unless_compiling("forward: using fused path", ranks=[0])
        loss = self.module(*inputs)
        return loss


def build() -> nn.Module:
    return Engine(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)))


def step(engine: nn.Module, i: int) -> None:
    out = engine(torch.randn(4, 8))
    out.pow(2).mean().backward()
    engine.zero_grad(set_to_none=True)
