"""Hazard: a Keras 3 transformer on the torch backend is compiled; every `MultiHeadAttention` call goes through `ops.dot_product_attention`, which (with `flash_attention=None`, the default) probes kernel support by constructing torch's pybind11 `SDPAParams`, which Dynamo cannot trace, so the graph breaks at every attention call. From keras-team/keras#23327 (fix torch.compile graph break in the torch backend's dot_product_attention)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import dot_product_attention

LABEL = "graph-break"
SOURCE = "https://github.com/keras-team/keras/pull/23327"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 5}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)
SKIP_WHEN_TRACING = False


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int = 8, num_heads: int = 2) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.query_dense = nn.Linear(dim, dim)
        self.key_dense = nn.Linear(dim, dim)
        self.value_dense = nn.Linear(dim, dim)
        self.output_dense = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        split = lambda t: t.view(b, s, self.num_heads, d // self.num_heads)  # noqa: E731
        q, k, v = split(self.query_dense(x)), split(self.key_dense(x)), split(self.value_dense(x))
        out = dot_product_attention(q, k, v, is_causal=True, skip_when_tracing=SKIP_WHEN_TRACING)
        return self.output_dense(out.reshape(b, s, d))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.ffn(x))


class TinyTransformer(nn.Module):
    def __init__(self, depth: int = 2, dim: int = 8) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(TransformerBlock(dim) for _ in range(depth)))
        self.head = nn.Linear(dim, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x).mean(1))


def build() -> nn.Module:
    return TinyTransformer()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 6, 8))
