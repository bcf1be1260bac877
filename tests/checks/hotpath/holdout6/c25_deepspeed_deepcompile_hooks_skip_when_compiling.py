"""Clean: the same ZeRO-3 engine with per-submodule forward pre-hooks and forward hooks around per-layer compiled decoder layers, but with DeepCompile the hooks return at once under `torch.compiler.is_compiling()` (the compiled graph does its own gathers; the coordinator is only the eager fallback), so no disabled call and no coordinator state is reached while tracing. From deepspeedai/DeepSpeed#8059 (keep the ZeRO-3 eager path guarded by `torch.compiler.is_compiling()`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import DeepSpeedZeRoOffload

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/8059"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class DecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(dim)
        self.gate_proj = nn.Linear(dim, 16)
        self.down_proj = nn.Linear(16, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.input_layernorm(x)
        return x + self.down_proj(torch.nn.functional.silu(self.gate_proj(h)))


class Llama(nn.Module):
    def __init__(self, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer() for _ in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class DeepSpeedEngine(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.module = Llama()
        self.optimizer = DeepSpeedZeRoOffload(self.module, deepcompile=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)


REGION = "module.layers.*"


def build() -> nn.Module:
    return DeepSpeedEngine()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
    model.optimizer.get_param_coordinator().reset_step()
