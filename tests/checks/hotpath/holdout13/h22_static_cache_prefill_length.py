"""Hazard: with a static KV cache and a compiled forward, every prompt is prefilled at its own token length, so each new prompt length fails the size guard on `input_ids`/`cache_position` and recompiles (then goes dynamic). From huggingface/transformers#29151 (Static cache + torch.compile: prefill recompiled for every new sequence length)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/transformers/issues/29151"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

DIM, VOCAB, MAX_CACHE = 8, 32, 16
PROMPTS = [[3, 5, 7], [1, 2, 3, 4, 5], [9, 9], [4, 4, 4, 4, 4, 4, 4], [2, 6, 1, 8], [5] * 6, [7, 3, 2], [1] * 9]


class StaticCache(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("key_cache", torch.zeros(1, MAX_CACHE, DIM), persistent=False)
        self.register_buffer("value_cache", torch.zeros(1, MAX_CACHE, DIM), persistent=False)

    def update(self, k: torch.Tensor, v: torch.Tensor, cache_position: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.key_cache.index_copy_(1, cache_position, k)
        self.value_cache.index_copy_(1, cache_position, v)
        return self.key_cache, self.value_cache


class LlamaForCausalLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)
        self.past_key_values = StaticCache()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        keys, values = self.past_key_values.update(k, v, cache_position)
        causal = torch.arange(MAX_CACHE)[None, :] <= cache_position[:, None]
        full_mask = torch.zeros(1, MAX_CACHE, dtype=torch.bool)
        full_mask[:, : attention_mask.shape[-1]] = attention_mask.bool()
        mask = causal & full_mask
        scores = (q @ keys.transpose(1, 2)).masked_fill(~mask, float("-inf"))
        return self.lm_head(torch.softmax(scores, dim=-1) @ values)


def build() -> nn.Module:
    return LlamaForCausalLM().eval()


def tokenize(prompt: list[int]) -> dict[str, torch.Tensor]:
    """The tokenizer call of the report's script: no padding, so the prompt keeps its own length."""
    ids = torch.tensor([prompt])
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def step(model: nn.Module, i: int) -> None:
    inputs = tokenize(PROMPTS[i])
    cache_position = torch.arange(inputs["input_ids"].shape[1])
    with torch.no_grad():
        model(inputs["input_ids"], inputs["attention_mask"], cache_position)  # prefill of generate()
