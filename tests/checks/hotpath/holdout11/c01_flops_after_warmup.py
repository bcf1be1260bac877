"""Clean: the same MFU report, but the trainer counts FLOPs only after the first (compiling) step has run outside the mode; the measured call runs eager under the mode while the compiled entry stays cached and is reused afterwards. Look-alike of pytorch/pytorch#190286 (FlopCounterMode prevents the frame from ever being compiled again)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import FlopsProfiler

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/190286"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

PROFILE_AT_STEP = 2


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
    if i == PROFILE_AT_STEP and PROFILER.flops_per_step is None:
        loss = PROFILER.measure(lambda inp: model(inp).sum(), x)
    else:
        loss = model(x).sum()
    loss.backward()
