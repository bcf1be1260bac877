"""Hazard: with vLLM's FlexAttention backend a hybrid sliding/global model (gemma-3) builds its `mask_mod` per layer from the layer's `sliding_window` (a sliding-window closure for local layers, the plain causal function for global ones) and passes it into the compiled attention, and the per-step `doc_ids` change length; Dynamo guards on the mask function and the shapes, so the compiled layer region is recompiled for each mask function and again for the changing token count (on gemma-3 this ran into the recompile limit). From vllm-project/vllm#57300 (keep mask_mod stable across sliding window layers)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout13._helpers_c import causal_mask_mod, dense_mask_from_mod, get_sliding_window_mask_mod

LABEL = "per-instance"
SOURCE = "https://github.com/vllm-project/vllm/pull/57300"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


@dataclass
class FlexAttentionMetadata:
    doc_ids: torch.Tensor  # one entry per scheduled token

    def get_mask_mod(self, sliding_window: int | None):
        base = causal_mask_mod if sliding_window is None else get_sliding_window_mask_mod(sliding_window)
        doc_ids = self.doc_ids

        def final_mask_mod(b, h, q_idx, kv_idx):
            return base(b, h, q_idx, kv_idx) & (doc_ids[q_idx] == doc_ids[kv_idx])

        return final_mask_mod


class Attention(nn.Module):
    def __init__(self, dim: int, sliding_window: int | None) -> None:
        super().__init__()
        self.sliding_window = sliding_window
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        q, k, v = self.qkv_proj(x).chunk(3, dim=-1)
        mask = dense_mask_from_mod(attn_metadata.get_mask_mod(self.sliding_window), x.shape[0], x.shape[0])
        scores = (q @ k.t()).masked_fill(~mask, float("-inf"))
        return self.o_proj(F.softmax(scores, dim=-1) @ v)


class Gemma3DecoderLayer(nn.Module):
    def __init__(self, dim: int, sliding_window: int | None) -> None:
        super().__init__()
        self.self_attn = Attention(dim, sliding_window)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU())

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        x = x + self.self_attn(x, attn_metadata)
        return x + self.mlp(x)


class Gemma3Model(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 4, sliding_window: int = 4) -> None:
        super().__init__()
        # every second layer is a global layer, the others use local sliding-window attention
        self.layers = nn.ModuleList(
            Gemma3DecoderLayer(dim, None if (j + 1) % 2 == 0 else sliding_window) for j in range(num_layers)
        )

    def forward(self, x: torch.Tensor, attn_metadata: FlexAttentionMetadata) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, attn_metadata)
        return x


REGION = "layers.*"


def build() -> nn.Module:
    return Gemma3Model()


def step(model: nn.Module, i: int) -> None:
    docs = [(3, 3), (4, 2), (2, 5), (3, 3), (6, 2), (4, 4), (1, 5), (3, 3)][i]  # scheduled requests' tokens
    doc_ids = torch.cat([torch.full((n,), j) for j, n in enumerate(docs)])
    with torch.no_grad():
        model(torch.randn(doc_ids.shape[0], 8), FlexAttentionMetadata(doc_ids=doc_ids))
