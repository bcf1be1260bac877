"""Hazard: a torchtune-style full-finetune recipe iterates a DataLoader built without `drop_last`, so the final batch of every epoch is smaller than the rest; the compiled decoder meets a new batch size at the epoch boundary and recompiles (with a dynamic batch dimension from then on). From meta-pytorch/torchtune#1654 (add drop_last to dataloader: flex_attention + compile break if the last batch has a different shape)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LABEL = "shape"
SOURCE = "https://github.com/meta-pytorch/torchtune/pull/1654"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

VOCAB, SEQ, BATCH_SIZE, NUM_SAMPLES = 32, 6, 4, 14  # 14 = 3 full batches + a batch of 2
DROP_LAST = False


class TransformerDecoder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.output = nn.Linear(dim, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.tok_embeddings(tokens)
        mask = torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool).triu(1)
        h = h + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return self.output(self.norm(h))


def _dataloader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (NUM_SAMPLES, SEQ + 1), generator=g)
    return DataLoader(TensorDataset(tokens), batch_size=BATCH_SIZE, shuffle=False, drop_last=DROP_LAST)


def _batches():
    dataloader = _dataloader()
    while True:  # for curr_epoch in range(epochs): for idx, batch in enumerate(dataloader)
        for (batch,) in dataloader:
            yield batch


_RECIPE_STATE: dict[int, object] = {}


def build() -> nn.Module:
    return TransformerDecoder()


def step(model: nn.Module, i: int) -> None:
    batches = _RECIPE_STATE.setdefault(id(model), _batches())
    batch = next(batches)
    tokens, labels = batch[:, :-1], batch[:, 1:]
    logits = model(tokens)
    F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1)).backward()
