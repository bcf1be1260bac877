"""Hazard: under DeepSpeed ZeRO-3 each submodule's parameters are partitioned to empty tensors and re-gathered by forward pre/post hooks the engine's parameter coordinator registers; when the model is compiled the hooks' `param.data` swaps, `ds_status` flags and the coordinator's counter run inside the compiled region, so Dynamo sees parameter sizes and Python state change between calls and does not settle on one graph. From deepspeedai/DeepSpeed#8328 (DeepCompile: stabilize ZeRO-3 parameter guards; recompiles when ds_status / param.data size changes)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_c import PartitionedParameterCoordinator, register_zero3_hooks

LABEL = "hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/8328"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": "TorchRuntimeError", "2.15": {"compiles_over_8_steps": 8, "graph_breaks": 7}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    model = MLP()
    register_zero3_hooks(model, PartitionedParameterCoordinator())
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
