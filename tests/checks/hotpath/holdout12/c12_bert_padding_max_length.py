"""Clean: the same compiled BERT encoder, but the collator pads every batch to a fixed max_length and the loader drops the short last batch (a fixed batch size), so every call has one (batch, seq_len) shape and compiles once. Look-alike of h22, from pytorch/pytorch#150403 (pad so the shapes stop changing)."""
from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F

from tests.checks.hotpath.holdout12._helpers_b import DataCollatorWithPadding

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/pull/150403"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class BertSelfAttention(nn.Module):
    def __init__(self, hidden: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, hidden_states: torch.Tensor, extended_mask: torch.Tensor) -> torch.Tensor:
        b, s, h = hidden_states.shape
        q, k, v = self.qkv(hidden_states).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=extended_mask)
        return self.out(ctx.transpose(1, 2).reshape(b, s, h))


class BertModel(nn.Module):
    def __init__(self, vocab: int = 32, hidden: int = 8, max_position: int = 16, layers: int = 2) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_position, hidden)
        self.layer = nn.ModuleList(BertSelfAttention(hidden) for _ in range(layers))
        self.norm = nn.LayerNorm(hidden)

    def get_extended_attention_mask(self, attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        extended = attention_mask[:, None, None, :].to(dtype)
        return (1.0 - extended) * torch.finfo(dtype).min

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        seq_length = input_ids.shape[1]
        position_ids = torch.arange(seq_length, device=input_ids.device)[None, :]
        hidden = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        mask = self.get_extended_attention_mask(attention_mask, hidden.dtype)
        for layer in self.layer:
            hidden = self.norm(hidden + layer(hidden, mask))
        return hidden


def build() -> nn.Module:
    return BertModel().eval()


COLLATOR = DataCollatorWithPadding(pad_token_id=0, padding="max_length", max_length=12)
# (batch of token-id lists) as the encode() loop sees them: sentences of varying length, drop_last=True keeps two per batch
BATCHES = [
    [[1, 5, 7, 2], [1, 9, 2]],
    [[1, 4, 4, 8, 6, 2], [1, 3, 2]],
    [[1, 2], [1, 6, 2]],
    [[1, 7, 7, 7, 7, 7, 3, 2], [1, 5, 2]],
    [[1, 6, 2], [1, 6, 6, 2]],
    [[1], [1, 4, 2]],
    [[1, 3, 3, 3, 3, 2], [1, 2]],
    [[1, 8, 8, 8, 8, 8, 8, 8, 8, 2], [1, 2]],
]


def step(model: nn.Module, i: int) -> None:
    features = COLLATOR(BATCHES[i])
    with torch.no_grad():
        model(features["input_ids"], features["attention_mask"])
