"""Hazard: an ESM-style transformer block built from TransformerEngine modules (`te.Linear`, `te.LayerNormMLP`) is compiled as a whole, but TE wraps those modules' `forward` in `no_torch_dynamo()`, so Dynamo splits the block at every TE call and runs them eagerly. From NVIDIA/TransformerEngine#705 (torch.compile graph breaks at `forward`: "inline in skipfiles: Linear.forward")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_c import TELayerNormMLP, TELinear

LABEL = "library-object"
SOURCE = "https://github.com/NVIDIA/TransformerEngine/issues/705"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 4}


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int = 8, n_heads: int = 2) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.layernorm_qkv = nn.LayerNorm(d_model)
        self.qkv = TELinear(d_model, 3 * d_model)
        self.out_proj = TELinear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.layernorm_qkv(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2) for z in (q, k, v))
        ctx = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.out_proj(ctx.transpose(1, 2).reshape(b, t, d))


class UnifiedTransformerBlock(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(d_model)
        self.ffn = TELayerNormMLP(d_model, 2 * d_model)
        self.scaling_factor = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(x) / self.scaling_factor
        return x + self.ffn(x) / self.scaling_factor


def build() -> nn.Module:
    return UnifiedTransformerBlock()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 6, 8))
    out.float().pow(2).mean().backward()
    model.zero_grad(set_to_none=True)
