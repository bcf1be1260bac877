"""Clean: the Megatron-style row- and column-parallel linears both pass their stored tp_group to the deprecation shim (in another module), so the shim's warnings.warn branch is never taken while tracing and the MLP compiles once with no break. From AMD-AGI/Primus#1169 (the fix: pass tp_group=self.tp_group like ColumnParallelLinear does)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = None
SOURCE = "https://github.com/AMD-AGI/Primus/pull/1169"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class _ParallelLinear(nn.Linear):
    def __init__(self, in_features: int, out_features: int, tp_group: object) -> None:
        super().__init__(in_features, out_features)
        self.tp_group = tp_group

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _helpers_b.get_tensor_model_parallel_group_if_none(self.tp_group)
        return super().forward(x)


class ColumnParallelLinear(_ParallelLinear):
    pass


class RowParallelLinear(_ParallelLinear):
    pass


class ParallelMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        group = _helpers_b.get_tensor_model_parallel_group()
        self.linear_fc1 = ColumnParallelLinear(8, 16, tp_group=group)
        self.linear_fc2 = RowParallelLinear(16, 8, tp_group=group)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.linear_fc2(torch.nn.functional.gelu(self.linear_fc1(hidden_states)))


def build() -> nn.Module:
    return ParallelMLP()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
