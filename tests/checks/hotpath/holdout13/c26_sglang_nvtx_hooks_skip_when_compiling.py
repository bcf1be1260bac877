"""Clean: the same SGLang layer-wise NVTX hooks after the fix: both hooks return early when `torch.compiler.is_compiling()` is true, so Dynamo traces them as no-ops and the hooked model compiles as one graph (the markers still fire when running eagerly). Look-alike of sgl-project/sglang#24122."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import PytHooks

LABEL = None
SOURCE = "https://github.com/sgl-project/sglang/pull/24122"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

SKIP_WHEN_COMPILING = True


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
