"""Hazard: the block's forward is wrapped in DeepSpeed's `instrument_w_nvtx` (another module), whose range push reads the accelerator's clock on every call: the graph breaks there, and the resumed frame recompiles each call on the timestamp left on the range stack. From deepspeedai/DeepSpeed#5697: Disable nvtx decorator to avoid graph break (`range_push` and `range_pop` return a non-tensor int)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = "graph-break"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/5697"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 1}


class ZeroBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.mlp = nn.Linear(8, 8)

    @_helpers_b.instrument_w_nvtx
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + torch.tanh(self.attn(x))
        return x + torch.relu(self.mlp(x))


def build() -> nn.Module:
    _helpers_b.enable_nvtx = True  # the engine was built without calling DeepSpeedEngine.compile()
    return ZeroBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
