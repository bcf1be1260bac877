"""Clean: the fixed `prepare_inputs_for_generation` still slices the last position out of the growing cumsum, but then `.clone(memory_format=torch.contiguous_format)` on `position_ids` and `input_ids` outside the compiled forward, so every decoding step hands the model a (1, 1) tensor with the same stride and the forward compiles once. From huggingface/transformers#32227 (the `clone` added to avoid recapturing with varying position_ids strides)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/transformers/pull/32227"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab: int = 32, dim: int = 8, max_pos: int = 64) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.embed_positions = nn.Embedding(max_pos, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        h = self.embed_tokens(input_ids) + self.embed_positions(position_ids)
        return self.lm_head(h + self.mlp(h))

    def prepare_inputs_for_generation(self, input_ids, attention_mask):
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids.masked_fill_(attention_mask == 0, 1)
        position_ids = position_ids[:, -1:]
        # This `clone` call is needed to avoid recapturing cuda graphs with `torch.compile`'s `mode="reduce-overhead`,
        # as otherwise the input `position_ids` would have various stride during the decoding.
        position_ids = position_ids.clone(memory_format=torch.contiguous_format)
        # `contiguous()` is not enough: with batch size 1 the (1, 1) slice already counts as contiguous
        input_ids = input_ids[:, -1:].clone(memory_format=torch.contiguous_format)
        return {"input_ids": input_ids, "position_ids": position_ids}


def build() -> nn.Module:
    return LlamaForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    if i == 0:
        model._ids = torch.randint(0, 32, (1, 4))
        model._mask = torch.ones(1, 4, dtype=torch.long)
    inputs = model.prepare_inputs_for_generation(model._ids, model._mask)
    with torch.no_grad():
        logits = model(**inputs)
    model._ids = torch.cat([model._ids, logits[:, -1:].argmax(-1)], dim=-1)
    model._mask = torch.cat([model._mask, model._mask.new_ones(1, 1)], dim=-1)
