"""Clean: the same per-decoder-layer compiled vLLM-style model after the HPU hotfix: the attention layer calls its impl with `self` and takes only the (shared) attention metadata from the forward context, so no per-layer name is looked up and all layer instances share one compiled frame. Look-alike of h45 (HabanaAI/vllm-fork#740)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_c import get_forward_context, set_forward_context

LABEL = None
SOURCE = "https://github.com/HabanaAI/vllm-fork/pull/740"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "model.layers.*"

NUM_LAYERS = 4


class AttentionImpl:
    scale = 8 ** -0.5

    def forward(self, layer, q, k, v, attn_metadata):
        scores = (q @ k.transpose(-1, -2)) * self.scale + attn_metadata["bias"]
        return torch.softmax(scores, dim=-1) @ v


class Attention(nn.Module):
    def __init__(self, prefix: str, static_forward_context: dict) -> None:
        super().__init__()
        self.layer_name = prefix
        self.impl = AttentionImpl()
        static_forward_context[prefix] = self

    def forward(self, q, k, v):
        attn_metadata = get_forward_context().attn_metadata
        return self.impl.forward(self, q, k, v, attn_metadata)


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
