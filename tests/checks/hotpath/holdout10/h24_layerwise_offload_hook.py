"""Hazard: a video DiT pipeline turns on layer-wise offload by default, which registers pre/post forward hooks on every transformer layer; the hooks call the offload state's `@torch.compiler.disable` methods, so with each layer compiled the traced hook hits a disabled callee and every per-layer compiled region is split at its hooks. From hao-ai-lab/FastVideo#1365 (LayerwiseOffloadHook entry points cause a per-layer graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import enable_layerwise_offload

LABEL = "hook"
SOURCE = "https://github.com/hao-ai-lab/FastVideo/pull/1365"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 4}
REGION = "blocks.*"


class WanTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ffn(self.norm2(x))


class WanTransformer3DModel(nn.Module):
    def __init__(self, depth: int = 3, dim: int = 8) -> None:
        super().__init__()
        self.patch_embedding = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList(WanTransformerBlock(dim) for _ in range(depth))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        x = self.patch_embedding(hidden_states)
        for block in self.blocks:
            x = block(x)
        return self.proj_out(x)


def build() -> nn.Module:
    model = WanTransformer3DModel()
    model.offload_state = enable_layerwise_offload(model.blocks)  # dit_layerwise_offload=True is the default
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 6, 8))
