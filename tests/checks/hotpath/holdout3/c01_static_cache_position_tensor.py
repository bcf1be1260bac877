"""Clean: the same decoding loop after the fix in huggingface/transformers#29114 — the cache writes at `cache_position`, a tensor the generation loop passes in, so no Python count changes between steps and the layer compiles once."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/29114"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.o_proj = nn.Linear(hidden, hidden)
        self.past_key_value = _helpers_a.StaticCache(1, heads, 16, self.head_dim)

    def forward(self, hidden_states: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        bsz, q_len, _ = hidden_states.shape
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        q = q.view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        k, v = self.past_key_value.update(k, v, cache_position)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(bsz, q_len, -1))


def build() -> nn.Module:
    return Attention()


def step(model: nn.Module, i: int) -> None:
    # the generation loop owns the position; it reaches the layer as a tensor
    cache_position = torch.tensor([i])
    with torch.no_grad():
        model(torch.randn(1, 1, 8), cache_position)
