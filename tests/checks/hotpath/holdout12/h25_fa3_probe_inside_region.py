"""Hazard: a TabPFN-style attention stage probes for FlashAttention-3 on every call (`_load_fa3_func` imports `flash_attn_interface` in a try/except) from inside the compiled region; Dynamo cannot trace the import, so every compiled attention stage breaks the graph. From PriorLabs/TabPFN#1166 (graph breaks inside tabpfn code: fa3_backend.py::_load_fa3_func)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import _load_fa3_func

LABEL = "graph-break"
SOURCE = "https://github.com/PriorLabs/TabPFN/pull/1166"
OBSERVED = {"compiles_over_8_steps": 11, "graph_breaks": 6}


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def compute_attention(self, q, k, v):
        fa3 = _load_fa3_func()
        if fa3 is not None:
            return fa3(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))[0].transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        return self.out(self.compute_attention(q, k, v).transpose(1, 2).reshape(b, s, d))


class PerFeatureEncoderLayer(nn.Module):
    """Attention between features, then between items, then an MLP (the TabPFN v2 layer layout)."""

    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.self_attn_between_features = MultiHeadAttention(dim)
        self.self_attn_between_items = MultiHeadAttention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (items, features, dim)
        x = x + self.self_attn_between_features(x)
        x = x + self.self_attn_between_items(x.transpose(0, 1)).transpose(0, 1)
        return x + self.mlp(x)


class PerFeatureTransformer(nn.Module):
    def __init__(self, dim: int = 8, nlayers: int = 2) -> None:
        super().__init__()
        self.encoder = nn.Linear(1, dim)
        self.layers = nn.ModuleList(PerFeatureEncoderLayer(dim) for _ in range(nlayers))
        self.decoder = nn.Linear(dim, 2)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        x = self.encoder(X[..., None])
        for layer in self.layers:
            x = layer(x)
        return self.decoder(x.mean(1))


def build() -> nn.Module:
    return PerFeatureTransformer().eval()  # enable_torch_compile=True compiles the whole transformer


def step(model: nn.Module, i: int) -> None:
    """TabPFNClassifier.predict_proba on one fixed-size test chunk."""
    with torch.no_grad():
        model(torch.randn(6, 4))
