"""Hazard: a ZeRO-3 style forward pre-hook on each submodule calls the coordinator's record_module, which is decorated with torch.compiler.disable, so Dynamo breaks the graph at every hooked submodule. From deepspeedai/DeepSpeed#7361 (Avoid graph break by enabling compile of record module)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = "hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7361"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 3}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 4, "graph_breaks": 3}}  # measured on the H100 machine


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.mlp = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        return x + self.mlp(torch.relu(x))


def register_zero3_hooks(model: nn.Module, coordinator: _helpers_b.TraceCoordinator) -> None:
    def _pre_forward_module_hook(module: nn.Module, args: tuple) -> None:
        _helpers_b.record_module(coordinator, module)

    for sub in (model.attn, model.mlp):
        sub.register_forward_pre_hook(_pre_forward_module_hook)


def build() -> nn.Module:
    model = Block()
    register_zero3_hooks(model, _helpers_b.TraceCoordinator())
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
