"""Hazard: transformers' `prepare_inputs_for_generation` slices `position_ids = attention_mask.long().cumsum(-1) - 1` down to the last token each decoding step, so the (1, 1) `position_ids` (and the `input_ids[:, -1:].contiguous()`, a no-op at batch size 1) handed to the compiled forward carry the stride of the growing sequence; the stride guard fails on the next step and the forward is recompiled (under cudagraphs every new stride re-records). From huggingface/transformers#32227 (>3-5x faster torch.compile forward compilation for autoregressive decoder models: position_ids clone to avoid varying strides)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/transformers/pull/32227"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


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
        return {"input_ids": input_ids[:, -1:].contiguous(), "position_ids": position_ids}


def build() -> nn.Module:
    return LlamaForCausalLM().eval()


def step(model: nn.Module, i: int) -> None:
    # one decoding step of generate(): the sequence and its attention mask grow by one token per step
    if i == 0:
        model._ids = torch.randint(0, 32, (1, 4))
        model._mask = torch.ones(1, 4, dtype=torch.long)
    inputs = model.prepare_inputs_for_generation(model._ids, model._mask)
    with torch.no_grad():
        logits = model(**inputs)
    model._ids = torch.cat([model._ids, logits[:, -1:].argmax(-1)], dim=-1)
    model._mask = torch.cat([model._mask, model._mask.new_ones(1, 1)], dim=-1)
