"""Hazard: a lit-parrot-style GPT allocates its KV caches lazily inside the compiled forward (`if not self.kv_caches: self.kv_caches = [...]`) and the generation script clears them between prompts (`model.kv_caches.clear()`), so each new prompt's first call re-creates Python state on the module inside the compiled region. From Lightning-AI/litgpt#51 ("Adding cached KVs": review asked what happens when B or max_seq_length change between generate calls; resetting the cache inside forward "would complicate the code, and may cause unintentional recompilation", so caches were moved to inputs/outputs and later out of forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "assigned"
SOURCE = "https://github.com/Lightning-AI/litgpt/pull/51"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

MAX_SEQ = 8


class Block(nn.Module):
    def __init__(self, n_embd: int = 8, n_head: int = 2) -> None:
        super().__init__()
        self.n_head, self.head_size = n_head, n_embd // n_head
        self.attn = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, input_pos: torch.Tensor, kv_cache: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.attn(x).view(b, t, 3, self.n_head, self.head_size).permute(2, 0, 3, 1, 4)
        cache_k, cache_v = kv_cache
        cache_k.index_copy_(2, input_pos, k)
        cache_v.index_copy_(2, input_pos, v)
        y = torch.nn.functional.scaled_dot_product_attention(q, cache_k, cache_v, attn_mask=mask)
        return x + self.proj(y.transpose(1, 2).reshape(b, t, c))


class Parrot(nn.Module):
    def __init__(self, vocab: int = 16, n_embd: int = 8, n_layer: int = 2) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.h = nn.ModuleList(Block(n_embd) for _ in range(n_layer))
        self.lm_head = nn.Linear(n_embd, vocab)
        self.register_buffer("bias", torch.tril(torch.ones(MAX_SEQ, MAX_SEQ, dtype=torch.bool)), persistent=False)
        self.kv_caches: list[tuple[torch.Tensor, torch.Tensor]] = []

    def forward(self, idx: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        b, t = idx.shape
        if not self.kv_caches:  # proxy for "first call of a new prompt"
            shape = (b, self.h[0].n_head, MAX_SEQ, self.h[0].head_size)
            self.kv_caches = [(torch.zeros(shape), torch.zeros(shape)) for _ in self.h]
        mask = self.bias.index_select(0, input_pos).view(1, 1, t, MAX_SEQ)
        x = self.wte(idx)
        for block, kv_cache in zip(self.h, self.kv_caches):
            x = block(x, mask, input_pos, kv_cache)
        return self.lm_head(x)


_state: dict[str, torch.Tensor] = {}


def build() -> nn.Module:
    _state["token"] = torch.tensor([[1]])
    return Parrot()


def step(model: nn.Module, i: int) -> None:
    pos = i % 4
    if pos == 0:  # a new prompt: the generate script resets the caches
        model.kv_caches.clear()
    with torch.no_grad():
        logits = model(_state["token"], torch.tensor([pos]))
    _state["token"] = logits[:, -1:].argmax(-1)
