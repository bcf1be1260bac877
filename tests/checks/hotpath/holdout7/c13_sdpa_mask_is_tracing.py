"""Clean: the same Llama SDPA mask update, but `_ignore_causal_mask_sdpa` first checks `is_torchdynamo_compiling()` and, while compiling, never evaluates `torch.all(attention_mask == 1)`: the causal mask is always materialized, so the forward compiles once with no break. From huggingface/transformers#28827 (the tracing guard added for the SDPA graph break)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import AttentionMaskConverter

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/issues/28827"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LlamaSdpaAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o_proj = nn.Linear(dim, dim)

    def forward(self, hidden_states, causal_mask):
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask, is_causal=causal_mask is None and q.shape[1] > 1)
        return self.o_proj(out)


class LlamaModel(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaSdpaAttention(dim) for _ in range(2))
        self.norm = nn.LayerNorm(dim)

    def _update_causal_mask(self, attention_mask, input_tensor, past_seen_tokens=0):
        if AttentionMaskConverter._ignore_causal_mask_sdpa_tracing_safe(attention_mask, input_tensor, past_seen_tokens):
            return None
        seq = input_tensor.shape[1]
        causal = torch.ones(seq, seq, dtype=torch.bool).tril()
        return causal[None] & attention_mask[:, None, :].bool()  # (batch, q, kv); heads folded into the batch here

    def forward(self, input_ids, attention_mask):
        h = self.embed_tokens(input_ids)
        causal_mask = self._update_causal_mask(attention_mask, h)
        for layer in self.layers:
            h = h + layer(h, causal_mask)
        return self.norm(h)


def build() -> nn.Module:
    return LlamaModel().eval()


def step(model: nn.Module, i: int) -> None:
    ids = torch.randint(0, 32, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.long)
    if i % 2:
        mask[1, :2] = 0  # a left-padded row in every other batch
    with torch.no_grad():
        model(ids, mask)
