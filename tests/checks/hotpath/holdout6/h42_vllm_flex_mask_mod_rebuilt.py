"""Hazard: vLLM's FlexAttention backend builds a fresh `FlexAttentionMetadata` every scheduler step and its `__post_init__` makes a new `final_mask_mod` closure over that metadata; the compiled attention layer calls the closure from the forward context, and the closure reads the Python int `self.seq_len`, which grows every step of a chunked prefill, so the layer recompiles on every step until the recompile limit. From vllm-project/vllm#27178 (torch._dynamo hit recompile_limit using FlexAttention backend)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_c import FlexAttentionMetadataBuilder, get_forward_context, set_forward_context

LABEL = "outside"
SOURCE = "https://github.com/vllm-project/vllm/issues/27178"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class FlexAttentionLayer(nn.Module):
    def __init__(self, dim: int = 8, max_model_len: int = 16) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)
        self.scale = dim**-0.5
        self.register_buffer("k_cache", torch.zeros(max_model_len, dim), persistent=False)
        self.register_buffer("v_cache", torch.zeros(max_model_len, dim), persistent=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        attn_metadata = get_forward_context().attn_metadata
        q, k, v = self.qkv_proj(hidden_states).chunk(3, dim=-1)
        n = attn_metadata.num_actual_tokens
        q_idx = torch.arange(n).view(-1, 1)
        kv_idx = torch.arange(attn_metadata.total_cache_tokens).view(1, -1)
        mask = attn_metadata.mask_mod(0, 0, q_idx, kv_idx)  # dense stand-in for create_block_mask(mask_mod, ...)
        k = torch.cat([self.k_cache[: attn_metadata.total_cache_tokens - n], k])
        v = torch.cat([self.v_cache[: attn_metadata.total_cache_tokens - n], v])
        scores = (q @ k.t()) * self.scale
        scores = scores.masked_fill(~mask, float("-inf"))
        return self.o_proj(torch.softmax(scores, dim=-1) @ v)


_builder = FlexAttentionMetadataBuilder()


def build() -> nn.Module:
    return FlexAttentionLayer()


def step(model: nn.Module, i: int) -> None:
    # one request, chunked prefill of 4 tokens per step into a 16-slot paged cache: seq_len grows 4, 5, ... 11
    query_start_loc = torch.tensor([0, 4])
    set_forward_context(_builder.build(query_start_loc, 4, seq_len=4 + i))
    with torch.no_grad():
        model(torch.randn(4, 8))
