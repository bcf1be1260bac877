"""Hazard: vLLM's RotaryEmbedding.forward_cuda (custom op enabled) casts its fp32 `cos_sin_cache` buffer to the query dtype by re-assigning the module attribute inside the compiled forward (`self.cos_sin_cache = self.cos_sin_cache.to(query.device, dtype=query.dtype)`), so the buffer Dynamo guarded on is replaced by a bf16 tensor after the first call and the model recompiles. From vllm-project/vllm#33800 (Support RotaryEmbedding CustomOp for gpt-oss: cos_sin_cache mutated during torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/vllm-project/vllm/pull/33800"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


def _apply_rotary_emb(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_size: int = 8, max_position_embeddings: int = 64, base: float = 10000.0) -> None:
        super().__init__()
        self.head_size = head_size
        inv_freq = 1.0 / (base ** (torch.arange(0, head_size, 2, dtype=torch.float) / head_size))
        freqs = torch.einsum("i,j -> ij", torch.arange(max_position_embeddings, dtype=torch.float), inv_freq)
        # NOTE: cache kept in FP32 for numerical stability
        self.register_buffer("cos_sin_cache", torch.cat((freqs.cos(), freqs.sin()), dim=-1), persistent=False)

    def forward_cuda(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        self.cos_sin_cache = self.cos_sin_cache.to(query.device, dtype=query.dtype)
        cos, sin = self.cos_sin_cache.index_select(0, positions).chunk(2, dim=-1)
        return _apply_rotary_emb(query, cos, sin), _apply_rotary_emb(key, cos, sin)

    def forward(self, positions: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        return self.forward_cuda(positions, query, key)


class GptOssAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim, dtype=torch.bfloat16)
        self.rotary_emb = RotaryEmbedding(head_size=dim)
        self.o_proj = nn.Linear(dim, dim, dtype=torch.bfloat16)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        q, k = self.rotary_emb(positions, q, k)
        return self.o_proj(torch.softmax(q @ k.t(), dim=-1) @ v)


def build() -> nn.Module:
    return GptOssAttention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.arange(i, i + 4), torch.randn(4, 8, dtype=torch.bfloat16))
