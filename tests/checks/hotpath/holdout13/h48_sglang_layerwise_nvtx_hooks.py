"""Hazard: SGLang's `enable_layerwise_nvtx_marker` registers forward pre/post hooks on every submodule (`PytHooks.register_hooks`) that format a marker dict and call `nvtx.range_push`/`range_pop`; when the model is compiled Dynamo traces into those hooks and cannot put the marker call in a graph, so each hooked layer splits the compiled forward. From sgl-project/sglang#24122 (skip NVTX hooks during torch.compile tracing, #23872)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import PytHooks

LABEL = "hook"
SOURCE = "https://github.com/sgl-project/sglang/pull/24122"
OBSERVED = {"compiles_over_8_steps": 20, "graph_breaks": 14}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 17, "graph_breaks": 14}}  # measured on the H100 machine

SKIP_WHEN_COMPILING = False


class LlamaMLP(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden, 2 * hidden)
        self.down_proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(nn.functional.silu(gate) * up)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.mlp = LlamaMLP(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.input_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, hidden: int = 8, num_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden) for _ in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    model = LlamaModel()
    # ModelRunner.__init__ with server_args.enable_layerwise_nvtx_marker
    PytHooks(skip_when_compiling=SKIP_WHEN_COMPILING).register_hooks(model.layers, prefix="model.layers")
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
