"""Clean: a memory/op tracker implemented as a TorchDispatchMode that declares `is_infra_mode()` wraps every training step; infra modes are ignored by Dynamo, and on torch 2.13 the compiled forward is built once and reused (the reported recompile on every call under an infra mode no longer happens). From pytorch/pytorch#164119 (unexpected recompilation under TorchDispatchMode with is_infra_mode set to True)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import AllocationTracker

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/164119"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Head(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) @ x.t()


def build() -> nn.Module:
    return Head()


def step(model: nn.Module, i: int) -> None:
    with AllocationTracker():
        with torch.no_grad():
            model(torch.randn(10, 8))
