"""Hazard: each decoder layer's attention is compiled as its own region and looks itself up in a module-level forward context by its `self.layer_name` string (vllm's `get_attention_context(self.layer_name)`), so every layer's distinct name becomes a constant guard and each layer recompiles the shared forward. From vllm-project/vllm-gaudi#975 (monkey-patch of Attention.forward to avoid recompilations of attention layers)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import get_attention_context, register_layer

LABEL = "per-instance"
SOURCE = "https://github.com/vllm-project/vllm-gaudi/pull/975"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "layers.*.self_attn"


class Attention(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.layer_name = prefix
        self.scale = dim**-0.5
        self.kv_cache = torch.zeros(2, 4, dim)
        register_layer(prefix, self)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        layer, kv_cache = get_attention_context(self.layer_name)
        kv_cache[0, : k.shape[0]].copy_(k)
        kv_cache[1, : v.shape[0]].copy_(v)
        attn = torch.softmax(q @ kv_cache[0].t() * layer.scale, dim=-1)
        return attn @ kv_cache[1]


class DecoderLayer(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.self_attn = Attention(dim, prefix=f"{prefix}.self_attn")
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        return x + self.o_proj(self.self_attn(q, k, v))


class TinyDecoder(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(dim, prefix=f"model.layers.{i}") for i in range(num_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    return TinyDecoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
