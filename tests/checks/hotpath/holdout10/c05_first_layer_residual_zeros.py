"""Clean: the same regionally compiled Qwen3-MoE-style decoder layers, but the model seeds `residual` with
`torch.zeros_like(hidden_states)` before the first layer (the fix in vllm-project/vllm-gaudi#1257), so every layer
sees a tensor and the shared layer `forward` compiles once."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm-gaudi/pull/1257"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*"


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: Optional[torch.Tensor] = None):
        if residual is not None:
            x = x + residual
            residual = x
        out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight
        return out if residual is None else (out, residual)


class Qwen3MoeDecoderLayer(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(dim)
        self.self_attn = nn.Linear(dim, dim)
        self.post_attention_layernorm = RMSNorm(dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, positions: torch.Tensor, hidden_states: torch.Tensor, residual: Optional[torch.Tensor]):
        if residual is None:
            residual = hidden_states
            hidden_states = self.input_layernorm(hidden_states)
        else:
            hidden_states, residual = self.input_layernorm(hidden_states, residual)
        hidden_states = self.self_attn(hidden_states)
        hidden_states, residual = self.post_attention_layernorm(hidden_states, residual)
        return self.mlp(hidden_states), residual


class Qwen3MoeModel(nn.Module):
    def __init__(self, num_layers: int = 4) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(32, 8)
        self.layers = nn.ModuleList(Qwen3MoeDecoderLayer() for _ in range(num_layers))
        self.norm = RMSNorm(8)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids)
        residual = torch.zeros_like(hidden_states)
        for layer in self.layers:
            hidden_states, residual = layer(positions, hidden_states, residual)
        hidden_states, _ = self.norm(hidden_states, residual)
        return hidden_states


def build() -> nn.Module:
    return Qwen3MoeModel()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randint(0, 32, (2, 4)), torch.arange(4))
