"""Hazard: a ZeRO-offload style forward hook (installed by a helper in another module) calls an eager-only function, so each hooked module graph-breaks and falls back to eager under compile, from pytorch/pytorch#135410 ([Dynamo] Eager fallback caused by graph breaks in module hooks)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_a

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/135410"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 4}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 6, "graph_breaks": 4}}  # measured on the H100 machine


class MyModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc0 = nn.Linear(8, 8, bias=False)
        self.fc1 = nn.Linear(8, 8, bias=False)
        self.dropout = nn.Dropout(0.5)

    def forward(self, data: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return residual + self.fc1(self.fc0(self.dropout(data))) * 0.5


def build() -> nn.Module:
    model = MyModule().eval()
    _helpers_a.install_offload_hooks(model)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.randn(4, 8))
