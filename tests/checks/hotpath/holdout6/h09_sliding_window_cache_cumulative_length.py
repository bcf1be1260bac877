"""Hazard: a decoder compiled for generation with a transformers-style static sliding-window cache; the cache layer
keeps `cumulative_length` as a Python int that `update()` advances by one on every decode step and that the cache
branches on (`is_full`, room left) and turns into mask sizes; the first decode step fails the guard
`cumulative_length == 0`, and the branches on the then-dynamic int split the filling and the full window into
further graphs (the report saw a recompile on every decode step). From tenstorrent/tt-xla#3688
(StaticSlidingWindowLayer "triggers torch.compile() to recompile on every decode step")."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout6._helpers_a import SlidingWindowCache

LABEL = "counter"
SOURCE = "https://github.com/tenstorrent/tt-xla/pull/3688"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}

HEADS, HEAD_DIM, WINDOW = 2, 4, 4


class SlidingAttention(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)
        self.layer_idx = layer_idx

    def forward(self, x: torch.Tensor, past_key_values: SlidingWindowCache) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        keys, values = past_key_values.update(k, v, self.layer_idx)
        kv_length, kv_offset = past_key_values.get_mask_sizes(self.layer_idx)
        valid = torch.arange(WINDOW) < kv_length  # slots not yet written are masked out
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=valid[None, None, None, :])
        return self.o_proj(out.transpose(1, 2).reshape(b, n, -1))


class DecoderLayer(nn.Module):
    def __init__(self, dim: int, layer_idx: int) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(dim)
        self.self_attn = SlidingAttention(dim, layer_idx)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor, past_key_values: SlidingWindowCache) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), past_key_values)
        return x + self.mlp(x)


class ForCausalLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = HEADS * HEAD_DIM, num_layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(DecoderLayer(dim, i) for i in range(num_layers))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, past_key_values: SlidingWindowCache) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h, past_key_values)
        return self.lm_head(h)


_gen: dict[str, object] = {}


def build() -> nn.Module:
    _gen.clear()
    _gen["cache"] = SlidingWindowCache(num_layers=2, max_cache_len=WINDOW, num_heads=HEADS, head_dim=HEAD_DIM)
    _gen["next"] = torch.zeros(1, 1, dtype=torch.long)
    return ForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    """One decode step of generate(): feed the last token, keep the same cache object."""
    with torch.no_grad():
        logits = model(_gen["next"], _gen["cache"])
    _gen["next"] = logits[:, -1:].argmax(-1)
