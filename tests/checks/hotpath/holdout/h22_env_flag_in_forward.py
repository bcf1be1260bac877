"""Hazard: forward reads an environment variable to pick a code path, and the loop flips it. From pytorch/pytorch#189027: [dynamo] Guard os.environ reads with an ambient env-var guard (os.getenv results are baked into compiled graphs)."""
from __future__ import annotations

import os

import torch
from torch import nn

LABEL = "env"
SOURCE = "https://github.com/pytorch/pytorch/pull/189027"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
LATENT = (
    "silently stale, not a recompile: on torch 2.13 the os.getenv result is baked into the graph with no guard, "
    "so flipping the variable neither recompiles nor changes the compiled output (checked against eager while "
    "writing the case: eager follows the flag, the compiled forward keeps the value of the first call)"
)

FLAG = "HOLDOUT_H22_USE_FAST_PATH"


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if int(os.getenv(FLAG, "0")):
            return self.linear(x) + 1
        return self.linear(x) - 1


def build() -> nn.Module:
    os.environ.pop(FLAG, None)
    return Model()


def step(model: nn.Module, i: int) -> None:
    os.environ[FLAG] = str(i % 2)  # an operator toggles the fast path while the job runs
    try:
        with torch.no_grad():
            model(torch.randn(4, 8))
    finally:
        if i == 7:
            os.environ.pop(FLAG, None)
