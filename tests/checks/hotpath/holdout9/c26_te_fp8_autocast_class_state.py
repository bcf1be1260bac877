"""Clean: a TransformerEngine-style model enters `fp8_autocast` inside its compiled forward; the context writes FP8 state (enabled flag, recipe, nesting depth) to class attributes of `FP8GlobalStateManager` and probes support through an `lru_cache`d function, but every write is undone by the context's exit within the same call, so on this torch the forward compiles once with no break. Look-alike of NVIDIA/TransformerEngine#2759 (FP8 autocast inside torch.compile: class-attribute state and lru_cache support checks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_c import FP8GlobalStateManager, fp8_autocast, reset_fp8_state

LABEL = None
SOURCE = "https://github.com/NVIDIA/TransformerEngine/pull/2759"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 3, "graph_breaks": 1}, "2.12": {"compiles_over_8_steps": 3, "graph_breaks": 1}}  # 2.11: measured on the H100 machine; 2.12 measured on the CPU-only machine (2.12.1+cu130)


class TELinear(nn.Linear):
    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        if FP8GlobalStateManager.is_fp8_enabled():
            scale = inp.abs().amax().clamp(min=1e-4) / 448.0
            inp = (inp / scale).round().clamp(-448, 448) * scale  # fake-quantised cast to fp8
        return super().forward(inp)


class TransformerLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = TELinear(8, 8)
        self.fc2 = TELinear(8, 8)
        self.recipe = {"margin": 0, "fp8_format": "HYBRID"}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with fp8_autocast(enabled=True, fp8_recipe=self.recipe):
            return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    reset_fp8_state()
    return TransformerLayer()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
