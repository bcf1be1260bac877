"""Clean: the same per-layer compiled attention, but (as the vllm-gaudi patch restores) the layer reads its own state through `self` instead of looking itself up in the forward context by its `layer_name` string; the name is still stored on the layer but never read under compile, so all layers share one compiled forward. From vllm-project/vllm-gaudi#975 (monkey-patch of Attention.forward to avoid recompilations of attention layers)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import register_layer

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm-gaudi/pull/975"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*.self_attn"


class Attention(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.layer_name = prefix
        self.scale = dim**-0.5
        self.kv_cache = torch.zeros(2, 4, dim)
        register_layer(prefix, self)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        layer, kv_cache = self, self.kv_cache
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
