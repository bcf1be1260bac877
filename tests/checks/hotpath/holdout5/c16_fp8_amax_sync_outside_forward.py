"""Clean: the float8-style linear keeps an `is_amax_initialized` flag and an amax history, but only the loop-side sync function (in another module) writes them, between steps and in place on buffers; forward reads only the scale buffer and records the current amax in place, so it compiles once. From pytorch/ao#1341 (float8 training: move module attribute setting to sync function)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_b

LABEL = None
SOURCE = "https://github.com/pytorch/ao/pull/1341"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Float8LinearEmulated(nn.Module):
    def __init__(self, in_features: int, out_features: int, history_len: int = 4) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.register_buffer("fp8_amax_history", torch.zeros(history_len))
        self.register_buffer("fp8_amax_current", torch.zeros(()))
        self.register_buffer("fp8_scale", torch.ones(()))
        self.is_amax_initialized = False  # owned by sync_float8_amax_and_scale_history

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.fp8_amax_current.copy_(x.abs().max())
        x_fp8 = (x * self.fp8_scale).clamp(-448.0, 448.0) / self.fp8_scale
        return x_fp8 @ self.weight.t()


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = Float8LinearEmulated(8, 8)
        self.fc2 = Float8LinearEmulated(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    return Mlp()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
    _helpers_b.sync_float8_amax_and_scale_history(model)
