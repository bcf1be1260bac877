"""Clean: the same sglang MRotaryEmbedding, but `forward` takes the torch-native rope path whenever Dynamo is tracing (`torch.compiler.is_compiling()`) and keeps the Triton launch (with its graph break) for eager only, so the compiled attention is one graph. Look-alike of sgl-project/sglang#12593."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_c import mrope_triton_kernel

LABEL = None
SOURCE = "https://github.com/sgl-project/sglang/pull/12593"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class MRotaryEmbedding(nn.Module):
    def __init__(self, head_size: int = 8, max_position: int = 64, base: float = 10000.0) -> None:
        super().__init__()
        self.head_size = head_size
        inv_freq = 1.0 / (base ** (torch.arange(0, head_size, 2).float() / head_size))
        freqs = torch.outer(torch.arange(max_position).float(), inv_freq)
        self.register_buffer("cos_sin_cache", torch.cat([freqs.cos(), freqs.sin()], dim=-1), persistent=False)

    def _forward_triton(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        cos_sin = self.cos_sin_cache[positions]
        cos, sin = cos_sin.chunk(2, dim=-1)
        torch._dynamo.graph_break()  # the kernel launch below is not traceable
        return mrope_triton_kernel(query, key, cos, sin)

    def _forward_native(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        cos, sin = self.cos_sin_cache[positions].chunk(2, dim=-1)
        q1, q2 = query.chunk(2, dim=-1)
        k1, k2 = key.chunk(2, dim=-1)
        query = torch.cat([q1 * cos - q2 * sin, q2 * cos + q1 * sin], dim=-1)
        key = torch.cat([k1 * cos - k2 * sin, k2 * cos + k1 * sin], dim=-1)
        return query, key

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        if torch.compiler.is_compiling():
            return self._forward_native(positions, query, key)
        return self._forward_triton(positions, query, key)


class Qwen2VLAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.rotary_emb = MRotaryEmbedding(head_size=dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        q, k = self.rotary_emb(positions, q, k)
        attn = torch.softmax(q @ k.t() / q.shape[-1] ** 0.5, dim=-1) @ v
        return self.o_proj(attn)


def build() -> nn.Module:
    return Qwen2VLAttention()


def step(model: nn.Module, i: int) -> None:
    positions = torch.arange(i, i + 6)
    with torch.no_grad():
        model(positions, torch.randn(6, 8))
