"""Hazard: a profiling tracker enters an op-counting TorchFunctionMode around every training step; the compiled model runs under the active mode, whose `count` attribute (a Python int bumped by every torch call) ends up in the guards, so the next step no longer matches and recompiles. From pytorch/pytorch#172088 (TorchFunctionMode shouldn't be active when checking guards: `___get_torch_function_mode_stack_at(0).count == 5`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import StepProfiler

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/172088"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": "AssertionError"}  # measured on torch 2.11.0+cu130 (CPU tensors)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x))).sin()


def build() -> nn.Module:
    model = MLP()
    model.profiler = StepProfiler()  # the tracker lives on the model, created once
    return model


def step(model: nn.Module, i: int) -> None:
    with model.profiler:
        model(torch.randn(4, 8))
