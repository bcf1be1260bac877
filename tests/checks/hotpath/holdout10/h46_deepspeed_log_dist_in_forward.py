"""Hazard: a DeepSpeed-engine style wrapper calls its `log_dist` utility (a `logging.Logger` call in another module) from inside the compiled forward on every step, and Dynamo cannot trace the logger call, so each forward is split in two. From deepspeedai/DeepSpeed#6496 (add option to disable logger while compiling to avoid graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_c import log_dist

LABEL = "graph-break"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/6496"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class Engine(nn.Module):
    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module
        self.wall_clock_breakdown = False

    def forward(self, *inputs):
        if not self.wall_clock_breakdown:
            log_dist("forward: using fused path", ranks=[0])
        loss = self.module(*inputs)
        return loss


def build() -> nn.Module:
    return Engine(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)))


def step(engine: nn.Module, i: int) -> None:
    out = engine(torch.randn(4, 8))
    out.pow(2).mean().backward()
    engine.zero_grad(set_to_none=True)
