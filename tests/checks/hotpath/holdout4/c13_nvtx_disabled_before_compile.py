"""Clean: the block keeps DeepSpeed's `instrument_w_nvtx` decorator (another module), but, as the engine's `compile()` now does, the global `enable_nvtx` switch is turned off before compiling, so the decorator is a plain pass-through and Dynamo folds the constant branch. From deepspeedai/DeepSpeed#5697: Disable nvtx decorator to avoid graph break."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/5697"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
    _helpers_b.enable_nvtx = False  # DeepSpeedEngine.compile(): "Avoid graph breaks"
    return ZeroBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
