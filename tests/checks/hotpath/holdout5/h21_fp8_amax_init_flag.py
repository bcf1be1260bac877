"""Hazard: a float8-style delayed-scaling linear initialises its amax buffer from the first batch inside forward and flips `self.is_amax_initialized = True` there, so the second call sees different module state and recompiles. From pytorch/ao#1341 (float8 training: move module attribute setting to sync function; stateful attribute setting in forward broke torchtitan + compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/pytorch/ao/pull/1341"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Float8LinearEmulated(nn.Module):
    def __init__(self, in_features: int, out_features: int, history_len: int = 4) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.1)
        self.register_buffer("fp8_amax_history", torch.zeros(history_len))
        self.register_buffer("fp8_scale", torch.ones(()))
        self.is_amax_initialized = False
        self.enable_amax_init = True

    def cast_to_fp8(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.fp8_scale).clamp(-448.0, 448.0) / self.fp8_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.enable_amax_init and not self.is_amax_initialized:
            self.fp8_amax_history.fill_(x.abs().max())
            self.fp8_scale.copy_(448.0 / self.fp8_amax_history.max())
            self.is_amax_initialized = True
        return self.cast_to_fp8(x) @ self.weight.t()


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
