"""Hazard: `generate()` with a static KV cache and `model.forward = torch.compile(...)` passes the 2D `attention_mask` that grows by one column per decoding step; the forward expands it to the static cache length itself, but the growing 2D input fails the size guard and recompiles (then goes dynamic). From huggingface/transformers#29165 ([generate + static cache + torch.compile] ability to pass statically shaped 4D attention_mask to the model forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/transformers/issues/29165"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

DIM, VOCAB, MAX_CACHE, PROMPT = 8, 32, 16, 4


class StaticCacheLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)
        self.register_buffer("key_cache", torch.zeros(1, MAX_CACHE, DIM), persistent=False)
        self.register_buffer("value_cache", torch.zeros(1, MAX_CACHE, DIM), persistent=False)

    def _update_causal_mask(self, attention_mask: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        causal = torch.arange(MAX_CACHE)[None, :] <= cache_position[:, None]
        if attention_mask.dim() == 2:  # 2D padding mask of the tokens seen so far: pad it to the static length
            padded = torch.zeros(attention_mask.shape[0], MAX_CACHE, dtype=torch.bool)
            padded[:, : attention_mask.shape[-1]] = attention_mask.bool()
            return causal[None] & padded[:, None, :]
        return causal[None] & attention_mask.bool()  # already (B, q, MAX_CACHE)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.embed_tokens(input_ids)).chunk(3, dim=-1)
        self.key_cache.index_copy_(1, cache_position, k)
        self.value_cache.index_copy_(1, cache_position, v)
        mask = self._update_causal_mask(attention_mask, cache_position)
        scores = (q @ self.key_cache.transpose(1, 2)).masked_fill(~mask, float("-inf"))
        return self.lm_head(torch.softmax(scores, dim=-1) @ self.value_cache)


def build() -> nn.Module:
    model = StaticCacheLM().eval()
    # prefill of the prompt ran before the decode loop; keep the running 2D mask and position on the model
    model._gen = {"attention_mask": torch.ones(1, PROMPT, dtype=torch.long), "cur_len": PROMPT}
    return model


def prepare_decode_inputs(gen: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """`_update_model_kwargs_for_generation`: append one column to the 2D mask per generated token."""
    gen["attention_mask"] = torch.cat([gen["attention_mask"], gen["attention_mask"].new_ones(1, 1)], dim=-1)
    cache_position = torch.tensor([gen["cur_len"]])
    gen["cur_len"] += 1
    return gen["attention_mask"], cache_position


def step(model: nn.Module, i: int) -> None:
    attention_mask, cache_position = prepare_decode_inputs(model._gen)
    next_token = torch.tensor([[i % VOCAB]])
    with torch.no_grad():
        model(next_token, attention_mask, cache_position)
