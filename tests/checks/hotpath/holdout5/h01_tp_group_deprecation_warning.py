"""Hazard: a row-parallel linear passes `tp_group=None` to a helper whose deprecation shim calls warnings.warn on every forward, and Dynamo cannot trace the C builtin, so the compiled forward is split at the warning (graph break plus resume frames). From AMD-AGI/Primus#1169 (stop the tp_group deprecation warning from breaking compiled graphs)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_a

LABEL = "graph-break"
SOURCE = "https://github.com/AMD-AGI/Primus/pull/1169"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class RowParallelLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.tp_group = None  # never set on this path (the column-parallel twin passes its group)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        group = _helpers_a.get_tp_group_if_none(None)  # literal None, as in the report
        out = x @ self.weight.t()
        if group is not None:
            out = out * 1.0  # all-reduce over `group` elided on one rank
        return out


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = RowParallelLinear(16, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def build() -> nn.Module:
    return MLP()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
