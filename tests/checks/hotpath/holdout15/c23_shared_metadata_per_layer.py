"""Clean: the same vLLM-style decoder compiled layer by layer, but the attention layers read the one metadata object the model runner shares across the KV-cache group (`forward_context.shared_metadata`) instead of indexing by their own `layer_name` string, so no per-layer Python value reaches the shared code and all layers reuse one compiled graph. Twin of h43, from vllm-project/vllm#33357 (per-layer strings in the graph made one subgraph per layer)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import (
    AttnMetadata,
    ForwardContext,
    get_forward_context,
    set_forward_context,
)

LABEL = None
SOURCE = "https://github.com/vllm-project/vllm/pull/33357"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "layers.*"


class Attention(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.layer_name = prefix  # kept for the weight loader; forward does not read it

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        md = get_forward_context().shared_metadata
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        w = torch.softmax(q @ k.transpose(-1, -2) * md.slot_scale, dim=-1)
        return w @ v


class DecoderLayer(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.self_attn = Attention(dim, f"{prefix}.self_attn.attn")
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(x)
        return x + self.mlp(x)


class LlamaModel(nn.Module):
    def __init__(self, dim: int = 8, n_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(dim, f"model.layers.{i}") for i in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    return LlamaModel()


_x = torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    md = AttnMetadata(seq_lens=torch.full((1,), 4), slot_scale=torch.tensor(0.35))
    set_forward_context(ForwardContext(shared_metadata=md))
    with torch.no_grad():
        model(_x)
