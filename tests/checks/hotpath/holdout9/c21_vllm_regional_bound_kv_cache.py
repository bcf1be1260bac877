"""Clean: the same regionally compiled Llama decoder layers, but (as vLLM v1 does) each attention layer has its own KV cache bound to it as a buffer at load time, so no per-layer Python int is read in the compiled forward and the one code object compiles once for all layers. Look-alike of vllm-project/vllm#12410."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/issues/12410"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "model.layers.*"


class LlamaAttention(nn.Module):
    def __init__(self, hidden: int, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix  # only used by the loader, never in forward
        self.qkv_proj = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.register_buffer("kv_cache", torch.zeros(2, 16, hidden), persistent=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        self.kv_cache[0, : k.shape[0]].copy_(k)
        self.kv_cache[1, : v.shape[0]].copy_(v)
        attn = torch.softmax(q @ self.kv_cache[0].t(), dim=-1) @ self.kv_cache[1]
        return self.o_proj(attn)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden: int, prefix: str) -> None:
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.self_attn = LlamaAttention(hidden, f"{prefix}.self_attn")
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU())

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(hidden_states)


class LlamaModel(nn.Module):
    def __init__(self, hidden: int = 8, num_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(LlamaDecoderLayer(hidden, f"model.layers.{i}") for i in range(num_layers))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return hidden_states


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = LlamaModel()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.model(hidden_states)


def build() -> nn.Module:
    return LlamaForCausalLM()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
