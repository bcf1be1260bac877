"""Hazard: regional compilation of each Llama decoder layer (vLLM HPU runner) recompiles once per layer because the attention picks its KV cache with `kv_caches[self.layer_idx]`, a per-instance Python int Dynamo specialises on. From vllm-project/vllm#12410 (performance regression with PyTorch regional compilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/vllm-project/vllm/issues/12410"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "model.layers.*"


class LlamaAttention(nn.Module):
    def __init__(self, hidden: int, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states: torch.Tensor, kv_caches: list[torch.Tensor]) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        kv_cache = kv_caches[self.layer_idx]
        kv_cache[0, : k.shape[0]].copy_(k)
        kv_cache[1, : v.shape[0]].copy_(v)
        attn = torch.softmax(q @ kv_cache[0].t(), dim=-1) @ kv_cache[1]
        return self.o_proj(attn)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden: int, layer_idx: int) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.self_attn = LlamaAttention(hidden, layer_idx)
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU())

    def forward(self, hidden_states: torch.Tensor, kv_caches: list[torch.Tensor]) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), kv_caches)
        return hidden_states + self.mlp(hidden_states)


class LlamaModel(nn.Module):
    def __init__(self, hidden: int = 8, num_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden, i) for i in range(num_layers))

    def forward(self, hidden_states: torch.Tensor, kv_caches: list[torch.Tensor]) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states, kv_caches)
        return hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = LlamaModel()
        self.kv_caches = [torch.zeros(2, 16, 8) for _ in self.model.layers]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.model(hidden_states, self.kv_caches)


def build() -> nn.Module:
    return LlamaForCausalLM()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
