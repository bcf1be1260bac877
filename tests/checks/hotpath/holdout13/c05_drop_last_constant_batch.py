"""Clean: the same training loop over a dataset whose size is not a multiple of the batch size, but the dataloader uses `drop_last=True`, so every step (across epoch boundaries) feeds the compiled model the same batch shape. Look-alike of saforem2/ezpz#190 (the fix: `drop_last=True` on the dataloader so the ragged last batch never reaches the compiled model)."""
from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LABEL = None
SOURCE = "https://github.com/saforem2/ezpz/pull/190"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layer = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)
        self.output = nn.Linear(dim, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.output(self.layer(self.tok_embeddings(tokens)))


class Trainer:
    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(0)
        data = torch.randint(0, 16, (5, 6), generator=generator)
        self.loader = DataLoader(TensorDataset(data), batch_size=2, shuffle=False, drop_last=True)
        self._it = iter(self.loader)

    def next_batch(self) -> torch.Tensor:
        try:
            (batch,) = next(self._it)
        except StopIteration:  # new epoch
            self._it = iter(self.loader)
            (batch,) = next(self._it)
        return batch


_trainer = Trainer()


def build() -> nn.Module:
    _trainer._it = iter(_trainer.loader)
    return TinyLM()


def step(model: nn.Module, i: int) -> None:
    tokens = _trainer.next_batch()
    logits = model(tokens)
    nn.functional.cross_entropy(logits.flatten(0, 1), tokens.flatten()).backward()
