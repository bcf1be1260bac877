"""Hazard: each attention layer looks up its per-layer state by its own string layer_name in a forward-context dict; compiled per layer (REGION "layers.*"). From HabanaAI/vllm-fork#709: fix torch.compile recompilations (unified_attention uses self.layer_name, "each layer has a different name")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/709"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "layers.*"

FORWARD_CONTEXT: dict[str, torch.Tensor] = {}


class Attention(nn.Module):
    def __init__(self, layer_name: str) -> None:
        super().__init__()
        self.layer_name = layer_name
        self.qkv = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kv_cache = FORWARD_CONTEXT[self.layer_name]
        return self.qkv(x) + kv_cache


class Model(nn.Module):
    def __init__(self, n_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Attention(f"model.layers.{i}.attn") for i in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    model = Model()
    for layer in model.layers:
        FORWARD_CONTEXT[layer.layer_name] = torch.zeros(8)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
