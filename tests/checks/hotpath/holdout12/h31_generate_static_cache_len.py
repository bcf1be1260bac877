"""Hazard: each `generate(..., cache_implementation="static")` call builds a fresh StaticCache sized `prompt_len + max_new_tokens`, so every request with a new prompt length hands the compiled decoding step key/value cache tensors of a new length: the size guards fail and the decode forward recompiles (then goes dynamic). From huggingface/transformers#47731 (reuse the previous max_cache_len so calls with several lengths do not recompile)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import GenerationMixin

LABEL = "shape"
SOURCE = "https://github.com/huggingface/transformers/pull/47731"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LlamaAttention(nn.Module):
    def __init__(self, layer_idx: int, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.heads = heads
        self.qkv_proj = nn.Linear(dim, 3 * dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, h, cache_position, past_key_values):
        b, s, d = h.shape
        q, k, v = self.qkv_proj(h).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        k, v = past_key_values.update(k, v, self.layer_idx, cache_position)
        positions = torch.arange(k.shape[2], device=h.device)
        mask = positions[None, :] <= cache_position[:, None]  # causal over the static cache
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, d))


class LlamaForCausalLM(nn.Module, GenerationMixin):
    def __init__(self, vocab: int = 16, dim: int = 8, num_layers: int = 2) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(LlamaAttention(i, dim) for i in range(num_layers))
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, input_ids, cache_position, past_key_values):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = h + layer(h, cache_position, past_key_values)
        return self.lm_head(h)


def build() -> nn.Module:
    return LlamaForCausalLM().eval()


PROMPT_LENGTHS = [5, 7, 5, 9, 6, 5, 11, 8]  # one chat request per step


def step(model: nn.Module, i: int) -> None:
    prompt = torch.randint(0, 16, (1, PROMPT_LENGTHS[i]), generator=torch.Generator().manual_seed(i))
    with torch.no_grad():
        model.generate(prompt, max_new_tokens=3)
