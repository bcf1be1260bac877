"""Clean: a debug activation logger is registered as a forward pre-hook (with kwargs) before compilation, and the hook returns at once under `torch.compiler.is_compiling()`, so its print and float conversion never enter the traced region: one compile, no graph break. Look-alike of pytorch/pytorch#110765 (forward hooks registered before compile region don't respect is_compiling control flow)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import ActivationLogger

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/110765"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
FRAMES = 2  # the pre-hook and forward are compiled as two frames, each once


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.logger = ActivationLogger()
        self.register_forward_pre_hook(self.logger.pre_forward, with_kwargs=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x))


def build() -> nn.Module:
    return Block()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 8)).sum().backward()
