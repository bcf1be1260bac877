"""Hazard: OLMo-core's transformer loop forwards a `block_kwargs` dict to every compiled block, and for intra-document masking it carries `cu_doc_lens` (a tensor whose length is the number of documents in the batch) and `max_doc_len` (a Python int recomputed per batch); Dynamo specialises on both, so new batches recompile every block until the int and the length are made dynamic. From allenai/OLMo-core#500 (frequent recompilation from cu_doc_lens and max_seq_len in block_kwargs)."""
from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/allenai/OLMo-core/issues/500"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Attention(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.w_qkv = nn.Linear(d_model, 3 * d_model)
        self.w_out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, *, cu_doc_lens: torch.Tensor, max_doc_len: int) -> torch.Tensor:
        q, k, v = self.w_qkv(x).chunk(3, dim=-1)
        doc_ids = torch.bucketize(torch.arange(x.shape[0]), cu_doc_lens[1:], right=True)
        pos = torch.arange(x.shape[0]) - cu_doc_lens[doc_ids]
        same_doc = doc_ids[:, None] == doc_ids[None, :]
        local = (pos[:, None] - pos[None, :]).abs() < max_doc_len
        scores = (q @ k.t()).masked_fill(~(same_doc & local), float("-inf"))
        return self.w_out(F.softmax(scores, dim=-1) @ v)


class TransformerBlock(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(d_model)
        self.attention = Attention(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_model), nn.SiLU())

    def forward(self, x: torch.Tensor, **kwargs: Any) -> torch.Tensor:
        h = x + self.attention(self.attention_norm(x), **kwargs)
        return h + self.feed_forward(h)


class Transformer(nn.Module):
    def __init__(self, d_model: int = 8, n_layers: int = 2) -> None:
        super().__init__()
        self.blocks = nn.ModuleDict({str(j): TransformerBlock(d_model) for j in range(n_layers)})

    def forward(self, x: torch.Tensor, doc_lens: torch.Tensor) -> torch.Tensor:
        block_kwargs: dict[str, Any] = {}
        if doc_lens is not None:
            block_kwargs["cu_doc_lens"] = F.pad(torch.cumsum(doc_lens, 0), (1, 0))
            block_kwargs["max_doc_len"] = int(doc_lens.max())
        for block in self.blocks.values():
            x = block(x, **block_kwargs)
        return x


REGION = "blocks.*"  # OLMo-core compiles each block


def build() -> nn.Module:
    return Transformer()


def step(model: nn.Module, i: int) -> None:
    doc_lens = [(4, 4), (2, 6), (3, 2, 3), (5, 3), (1, 2, 5), (8,), (6, 2), (2, 3, 3)][i]  # 8 tokens per instance
    with torch.no_grad():
        model(torch.randn(8, 8), torch.tensor(doc_lens))
