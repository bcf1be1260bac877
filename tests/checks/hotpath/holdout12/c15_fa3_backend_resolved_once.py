"""Clean: the attention-backend registry resolves FlashAttention-3 once, when the model is built (outside the traced region), and each attention stage only reads the stored backend name, which never changes; the compiled transformer traces no import and compiles once. Look-alike of h25, from PriorLabs/TabPFN#1166 (fixed by resolving the backend outside the compiled region)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import _load_fa3_func, select_attention_backend

LABEL = None
SOURCE = "https://github.com/PriorLabs/TabPFN/pull/1166"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.backend = select_attention_backend()  # resolved once, eagerly
        self._fa3 = _load_fa3_func() if self.backend == "fa3" else None
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def compute_attention(self, q, k, v):
        if self.backend == "fa3":
            return self._fa3(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))[0].transpose(1, 2)
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
