"""Hazard: the attention layer reads the per-step `attn_metadata` from vLLM's module-level forward context and branches on its Python ints (`num_prefills`, `num_prefill_tokens`, `num_decode_tokens`) to split prefill and decode tokens; the runner builds new metadata every step, so the ints Dynamo specialised on change and the compiled model recompiles as the prefill/decode mix changes. From pytorch/pytorch#130174 (make torch.compile work with vLLM models: attn_metadata guards)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_c import build_metadata, get_forward_context, set_forward_context

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/130174"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.register_buffer("kv_cache", torch.zeros(2, 32, dim), persistent=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        attn_metadata = get_forward_context().attn_metadata
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        self.kv_cache[0].index_copy_(0, attn_metadata.slot_mapping, k)
        self.kv_cache[1].index_copy_(0, attn_metadata.slot_mapping, v)
        out = torch.empty_like(q)
        num_prefill_tokens = attn_metadata.num_prefill_tokens
        if attn_metadata.num_prefills > 0:
            pq, pk, pv = q[:num_prefill_tokens], k[:num_prefill_tokens], v[:num_prefill_tokens]
            out[:num_prefill_tokens] = torch.softmax(pq @ pk.t(), dim=-1) @ pv
        if attn_metadata.num_decode_tokens > 0:
            dq = q[num_prefill_tokens:]
            out[num_prefill_tokens:] = torch.softmax(dq @ self.kv_cache[0].t(), dim=-1) @ self.kv_cache[1]
        return out


class LlamaModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.self_attn = Attention()
        self.mlp = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        h = hidden_states + self.self_attn(hidden_states)
        return h + self.mlp(h)


def build() -> nn.Module:
    return LlamaModel()


def step(model: nn.Module, i: int) -> None:
    # scheduler output: 8 tokens per step, a changing mix of chunked-prefill and decode tokens
    num_prefill_tokens = [8, 5, 0, 3, 0, 6, 2, 0][i]
    set_forward_context(build_metadata(num_prefill_tokens, 8 - num_prefill_tokens))
    with torch.no_grad():
        model(torch.randn(8, 8))
