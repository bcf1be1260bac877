"""Hazard: a Llama-style attention layer with `attn_implementation="flash_attention_2"` unpads the batch when an attention mask is passed; the shared flash-attention utils take `max_seqlen_in_batch` with `.item()` (the varlen kernel wants a Python int) and gather the kept tokens with `nonzero`, so every compiled forward with a padding mask breaks the graph inside the library helper, and the resumed frames are guarded on the Python int max length, recompiling as the padding changes. From huggingface/transformers#41803 (torch.compile graph break in the flash_attention_2 backend)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import _flash_attention_forward

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/transformers/issues/41803"
OBSERVED = {"compiles_over_8_steps": 12, "graph_breaks": 6}


class LlamaFlashAttention2(nn.Module):
    def __init__(self, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None) -> torch.Tensor:
        b, s, _ = hidden_states.shape
        shape = (b, s, self.heads, self.head_dim)
        q = self.q_proj(hidden_states).view(shape)
        k = self.k_proj(hidden_states).view(shape)
        v = self.v_proj(hidden_states).view(shape)
        out = _flash_attention_forward(q, k, v, attention_mask, is_causal=True)
        return self.o_proj(out.reshape(b, s, -1))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden)
        self.self_attn = LlamaFlashAttention2(hidden)
        self.post_attention_layernorm = nn.RMSNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 16), nn.SiLU(), nn.Linear(16, hidden))

    def forward(self, hidden_states, attention_mask=None):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states), attention_mask)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


def build() -> nn.Module:
    return LlamaDecoderLayer()


def step(model: nn.Module, i: int) -> None:
    attention_mask = torch.ones(2, 6, dtype=torch.long)
    attention_mask[1, : [1, 2, 3, 1, 2, 3, 1, 2][i]] = 0  # left padding from the tokenizer
    with torch.no_grad():
        model(torch.randn(2, 6, 8), attention_mask)
