"""Hazard: a vLLM-V0-style model forward takes the batch's `attn_metadata` as an argument, and the attention splits the flattened tokens into their prefill and decode parts with the metadata's Python ints (`num_prefill_tokens`, `num_decode_tokens`). Continuous batching changes the prefill/decode mix every step, so the compiled model is re-specialised on those ints (and on the 0 / 1 values of an all-decode or single-prefill batch). From vllm-project/vllm#9029 (one step of making vLLM compatible with Dynamo: stop passing attention metadata through every layer's arguments and pass it through a global forward context around a single attention custom op, after guards such as `L['attn_metadata'].num_decode_tokens == 0` kept failing)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/vllm-project/vllm/pull/9029"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 0}


@dataclass
class FlashAttentionMetadata:
    num_prefills: int
    num_prefill_tokens: int
    num_decode_tokens: int
    scale: float = 0.35


class Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv_proj = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, attn_metadata: FlashAttentionMetadata) -> torch.Tensor:
        q, k, v = self.qkv_proj(hidden).chunk(3, dim=-1)
        n_pre = attn_metadata.num_prefill_tokens
        out = torch.empty_like(q)
        if n_pre > 0:  # prefill tokens: full attention over the prefill chunk
            w = torch.softmax(q[:n_pre] @ k[:n_pre].T * attn_metadata.scale, dim=-1)
            out[:n_pre] = w @ v[:n_pre]
        if attn_metadata.num_decode_tokens > 0:  # decode tokens: one query each against its own key/value
            out[n_pre:] = v[n_pre:] * torch.sigmoid((q[n_pre:] * k[n_pre:]).sum(-1, keepdim=True))
        return self.o_proj(out)


class LlamaForCausalLM(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = Attention(dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, hidden: torch.Tensor, attn_metadata: FlashAttentionMetadata) -> torch.Tensor:
        hidden = hidden + self.attn(hidden, attn_metadata)
        return hidden + self.mlp(hidden)


def build() -> nn.Module:
    return LlamaForCausalLM()


# the scheduler's token budget is fixed at 6 tokens a step; the prefill/decode split of those tokens varies
_SPLITS = [(6, 0), (4, 2), (2, 4), (0, 6), (3, 3), (0, 6), (5, 1), (1, 5)]
_hidden = torch.randn(6, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    n_pre, n_dec = _SPLITS[i]
    md = FlashAttentionMetadata(num_prefills=int(n_pre > 0), num_prefill_tokens=n_pre, num_decode_tokens=n_dec)
    with torch.no_grad():
        model(_hidden, md)
