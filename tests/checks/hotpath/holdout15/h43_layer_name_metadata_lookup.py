"""Hazard: vLLM-style attention layers fetch their metadata from the global forward context by their own prefix string (`forward_context.attn_metadata[self.layer_name]`), and the decoder layers are compiled one by one, so every layer's distinct `layer_name` string becomes a new specialisation of the same shared code: one compiled graph per layer instead of one for all. From vllm-project/vllm#33357 (strings appearing in the graph made the number of unique subgraphs roughly one per layer instead of 3-5, regressing cold-start compile time)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_c import (
    AttnMetadata,
    ForwardContext,
    get_forward_context,
    set_forward_context,
)

LABEL = "per-instance"
SOURCE = "https://github.com/vllm-project/vllm/pull/33357"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "layers.*"


class Attention(nn.Module):
    def __init__(self, dim: int, prefix: str) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.layer_name = prefix

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        md = get_forward_context().attn_metadata[self.layer_name]
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
    # the model runner builds one metadata object and registers it under every layer's name
    md = AttnMetadata(seq_lens=torch.full((1,), 4), slot_scale=torch.tensor(0.35))
    set_forward_context(ForwardContext(attn_metadata={a.layer_name: md for a in model.modules() if isinstance(a, Attention)}))
    with torch.no_grad():
        model(_x)
