"""Hazard: a BLOOM-style attention block builds its causal mask with `torch.full((L, L), finfo.min)` from the
sequence length of each request; every new prompt length fails the size guard, the first one recompiles the block
(after which Dynamo marks the length dynamic). From pytorch/pytorch#123810 (inductor recompiles torch.full with a
length taken from x.shape)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/123810"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class BloomAttentionBlock(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 8) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.query_key_value = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)

    def _prepare_attn_mask(self, input_ids: torch.Tensor) -> torch.Tensor:
        _, seq_len = input_ids.shape
        mask = torch.full((seq_len, seq_len), torch.finfo(torch.float32).min)
        return torch.triu(mask, diagonal=1)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = self.word_embeddings(input_ids)
        q, k, v = self.query_key_value(h).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2) + self._prepare_attn_mask(input_ids)
        return self.dense(torch.softmax(scores, dim=-1) @ v)


def build() -> nn.Module:
    return BloomAttentionBlock()


def step(model: nn.Module, i: int) -> None:
    prompt_len = (3, 4, 5, 3, 6, 4, 7, 5)[i]  # serving: every request has its own length
    with torch.no_grad():
        model(torch.randint(10, 64, (2, prompt_len)))
