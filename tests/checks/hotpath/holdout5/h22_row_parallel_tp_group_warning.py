"""Hazard: a Megatron-style RowParallelLinear passes tp_group=None to the deprecation shim get_tensor_model_parallel_group_if_none (in another module), whose warnings.warn Dynamo cannot trace, so every row-parallel forward breaks the graph. From AMD-AGI/Primus#1169 (fix(megatron): stop the tp_group deprecation warning from breaking compiled graphs)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = "graph-break"
SOURCE = "https://github.com/AMD-AGI/Primus/pull/1169"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class ColumnParallelLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, tp_group: object) -> None:
        super().__init__(in_features, out_features)
        self.tp_group = tp_group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _helpers_b.get_tensor_model_parallel_group_if_none(self.tp_group)
        return super().forward(x)


class RowParallelLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the reduce-scatter path is dead with tp=1, but the group is still resolved through the shim with None
        _helpers_b.get_tensor_model_parallel_group_if_none(None)
        return super().forward(x)


class ParallelMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear_fc1 = ColumnParallelLinear(8, 16, tp_group=_helpers_b.get_tensor_model_parallel_group())
        self.linear_fc2 = RowParallelLinear(16, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.linear_fc2(torch.nn.functional.gelu(self.linear_fc1(hidden_states)))


def build() -> nn.Module:
    return ParallelMLP()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
