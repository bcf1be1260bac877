"""Hazard: under ZeRO-3, DeepSpeed registers a forward pre-hook and a forward hook on every submodule that owns parameters; the hooks call the coordinator's `fetch_sub_module` / `release_sub_module`, which DeepSpeed keeps out of Dynamo, so each per-layer compiled decoder layer is cut at every LayerNorm/Linear it calls, and while the coordinator records its first-step trace the hook frames are recompiled as `__submodule_order` grows. From deepspeedai/DeepSpeed#5325 (Disable compile for Z3 hook function: `@compiler.disable` on the ZeRO-3 hook code that Dynamo failed to trace)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import DeepSpeedZeRoOffload

LABEL = "pre-hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/5325"
OBSERVED = {"compiles_over_8_steps": 19, "graph_breaks": 13}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 16, "graph_breaks": 13}}  # measured on the H100 machine


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
        self.optimizer = DeepSpeedZeRoOffload(self.module)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x)


REGION = "module.layers.*"


def build() -> nn.Module:
    return DeepSpeedEngine()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
    model.optimizer.get_param_coordinator().reset_step()
