"""Hazard: vLLM's `unified_attention` looks its layer up by name in the forward context (`forward_context.no_compile_layers[layer_name]`); on a backend that compiles each decoder layer as its own region, the per-layer `layer_name` string is guarded as a constant, so every attention layer instance recompiles the shared forward code. From HabanaAI/vllm-fork#740 (hotfix recompilations caused by unified attention: layer_name lookup makes dynamo recompile each Attention layer)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import get_forward_context, set_forward_context

LABEL = "per-instance"
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/740"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "model.layers.*"

NUM_LAYERS = 4


class AttentionImpl:
    scale = 8 ** -0.5

    def forward(self, layer, q, k, v, attn_metadata):
        scores = (q @ k.transpose(-1, -2)) * self.scale + attn_metadata["bias"]
        return torch.softmax(scores, dim=-1) @ v


def unified_attention(query, key, value, layer_name: str):
    forward_context = get_forward_context()
    attn_metadata = forward_context.attn_metadata
    self = forward_context.no_compile_layers[layer_name]
    return self.impl.forward(self, query, key, value, attn_metadata)


class Attention(nn.Module):
    def __init__(self, prefix: str, static_forward_context: dict) -> None:
        super().__init__()
        self.layer_name = prefix
        self.impl = AttentionImpl()
        static_forward_context[prefix] = self

    def forward(self, q, k, v):
        return unified_attention(q, k, v, self.layer_name)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, prefix: str, static_forward_context: dict, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.attn = Attention(f"{prefix}.self_attn.attn", static_forward_context)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        return hidden_states + self.o_proj(self.attn(q, k, v))


class LlamaModel(nn.Module):
    def __init__(self, static_forward_context: dict) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(f"model.layers.{i}", static_forward_context) for i in range(NUM_LAYERS)]
        )

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            h = layer(h)
        return h


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.static_forward_context: dict = {}
        self.model = LlamaModel(self.static_forward_context)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.model(h)


def build() -> nn.Module:
    return LlamaForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    attn_metadata = {"bias": torch.zeros(6, 6)}
    with torch.no_grad(), set_forward_context(attn_metadata, model.static_forward_context):
        model(torch.randn(6, 8))  # model runner: execute_model
