"""Clean: the same tp_group deprecation shim as the hazard, but the call site passes through the fix of the report: the warning is skipped while Dynamo traces (`torch.compiler.is_compiling()`), so the compiled forward has no break. From AMD-AGI/Primus#1169 (stop the tp_group deprecation warning from breaking compiled graphs)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_a

LABEL = None
SOURCE = "https://github.com/AMD-AGI/Primus/pull/1169"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def resolve_tp_group(tp_group: object | None) -> object:
    if tp_group is None and torch.compiler.is_compiling():
        return _helpers_a._DEFAULT_TP_GROUP  # same fallback, no warning under tracing
    return _helpers_a.get_tp_group_if_none(tp_group)


class RowParallelLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        group = resolve_tp_group(None)
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
