"""Clean: the same lit-parrot-style GPT with KV-cache management moved out of forward: the generation script calls `model.set_kv_cache(batch_size)` once before the loop and zeroes the cache buffers in place between prompts; forward only reads the cache modules and writes them with `index_copy_`. From Lightning-AI/litgpt#51 (the review's alternative to allocating caches inside forward, where resizing "may cause unintentional recompilation": keep cache creation and resets outside the compiled forward)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Lightning-AI/litgpt/pull/51"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

MAX_SEQ = 8


class KVCache(nn.Module):
    def __init__(self, shape: tuple[int, int, int, int]) -> None:
        super().__init__()
        self.register_buffer("k", torch.zeros(shape), persistent=False)
        self.register_buffer("v", torch.zeros(shape), persistent=False)

    def forward(self, input_pos: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.k.index_copy_(2, input_pos, k)
        self.v.index_copy_(2, input_pos, v)
        return self.k, self.v

    def reset_parameters(self) -> None:
        self.k.zero_()
        self.v.zero_()


class Block(nn.Module):
    def __init__(self, n_embd: int = 8, n_head: int = 2) -> None:
        super().__init__()
        self.n_head, self.head_size = n_head, n_embd // n_head
        self.attn = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.kv_cache: KVCache | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.attn(x).view(b, t, 3, self.n_head, self.head_size).permute(2, 0, 3, 1, 4)
        k, v = self.kv_cache(input_pos, k, v)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return x + self.proj(y.transpose(1, 2).reshape(b, t, c))


class Parrot(nn.Module):
    def __init__(self, vocab: int = 16, n_embd: int = 8, n_layer: int = 2) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.h = nn.ModuleList(Block(n_embd) for _ in range(n_layer))
        self.lm_head = nn.Linear(n_embd, vocab)
        self.register_buffer("bias", torch.tril(torch.ones(MAX_SEQ, MAX_SEQ, dtype=torch.bool)), persistent=False)

    def set_kv_cache(self, batch_size: int) -> None:
        for block in self.h:
            block.kv_cache = KVCache((batch_size, block.n_head, MAX_SEQ, block.head_size))

    def forward(self, idx: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        mask = self.bias.index_select(0, input_pos).view(1, 1, t, MAX_SEQ)
        x = self.wte(idx)
        for block in self.h:
            x = block(x, mask, input_pos)
        return self.lm_head(x)


_state: dict[str, torch.Tensor] = {}


def build() -> nn.Module:
    _state["token"] = torch.tensor([[1]])
    model = Parrot()
    model.set_kv_cache(batch_size=1)
    return model


def step(model: nn.Module, i: int) -> None:
    pos = i % 4
    if pos == 0:  # a new prompt: zero the caches in place, outside the compiled forward
        for block in model.h:
            block.kv_cache.reset_parameters()
    with torch.no_grad():
        logits = model(_state["token"], torch.tensor([pos]))
    _state["token"] = logits[:, -1:].argmax(-1)
