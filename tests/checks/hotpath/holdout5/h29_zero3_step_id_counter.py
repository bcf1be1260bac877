"""Hazard: once the ZeRO-3 trace recorder is compiled instead of disabled, its forward pre-hook bumps the coordinator's Python step id and stores it on the submodule, a counter Dynamo specialises on, so every step recompiles. From deepspeedai/DeepSpeed#7361 (Avoid graph break by enabling compile of record module), where the recorder's disable was removed."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = "counter"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7361"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.Linear(8, 8)
        self.mlp = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x)
        return x + self.mlp(torch.relu(x))


def build() -> nn.Module:
    model = Block()
    coordinator = _helpers_b.TraceCoordinator()

    def _pre_forward_module_hook(module: nn.Module, args: tuple) -> None:
        coordinator.record_step(module)

    model.attn.register_forward_pre_hook(_pre_forward_module_hook)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
