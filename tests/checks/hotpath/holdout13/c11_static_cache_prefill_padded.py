"""Clean: the same static-cache prefill, but the prompts are tokenized with `padding="max_length"` to a fixed bucket (the `pad_to_multiple_of` advice in the report), so every prefill has one shape and the compiled forward is reused. From huggingface/transformers#29151."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/issues/29151"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

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


PAD_ID, PAD_TO = 0, 12


def tokenize(prompt: list[int]) -> dict[str, torch.Tensor]:
    """tokenizer(..., padding="max_length", max_length=PAD_TO): left-padded to one bucket, pads masked out."""
    pad = PAD_TO - len(prompt)
    ids = torch.tensor([[PAD_ID] * pad + prompt])
    mask = torch.tensor([[0] * pad + [1] * len(prompt)])
    return {"input_ids": ids, "attention_mask": mask}


def step(model: nn.Module, i: int) -> None:
    inputs = tokenize(PROMPTS[i])
    cache_position = torch.arange(inputs["input_ids"].shape[1])
    with torch.no_grad():
        model(inputs["input_ids"], inputs["attention_mask"], cache_position)  # prefill of generate()
