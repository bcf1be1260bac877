"""Hazard: the trainer counts FLOPs for its MFU report by running the first training step under `FlopCounterMode`; Dynamo refuses to compile a frame while a non-infra dispatch mode is active and then remembers the code object as skipped, so the model never compiles afterwards and silently trains eager. From pytorch/pytorch#190286 (FlopCounterMode prevents the frame from ever being compiled again)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import FlopsProfiler

LABEL = "dispatch-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/190286"
OBSERVED = {"compiles_over_8_steps": 0, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)
LATENT = (
    "the region is never compiled at all (0 compiles, no graph-break record): the frame seen first under "
    "FlopCounterMode is marked skipped for good, a silent eager fallback the two counts do not flag"
)


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(x)))


PROFILER = FlopsProfiler()


def build() -> nn.Module:
    PROFILER.flops_per_step = None
    return Block()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    if PROFILER.flops_per_step is None:
        loss = PROFILER.measure(lambda inp: model(inp).sum(), x)
    else:
        loss = model(x).sum()
    loss.backward()
