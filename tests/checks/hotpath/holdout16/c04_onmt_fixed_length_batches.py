"""Clean: the same OpenNMT-py style translation model and token batcher, but every batch is padded to one fixed
length and holds a fixed number of examples, so the compiled model sees one input shape for the whole run and
compiles once. From pytorch/pytorch#93468 (the suggested way to take the dynamic sizes out was to "synthetically
fix the dynamic size")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import token_batches

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/93468"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

PAD = 0
MAX_LEN = 10


class NMTModel(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 8) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)
        self.generator = nn.Linear(dim, vocab)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        return self.generator(self.encoder(self.embeddings(src)))


class Trainer:
    def __init__(self) -> None:
        g = torch.Generator().manual_seed(0)
        lengths = [3, 5, 4, 7, 6, 9, 5, 8, 4, 6, 10, 7, 5, 9, 8, 6, 4, 7, 9, 10]
        self.examples = [torch.randint(1, 20, (n,), generator=g) for n in lengths]
        # budget = 2 examples x MAX_LEN tokens: with the fixed padding every batch is [2, MAX_LEN]
        self.batches = list(token_batches(self.examples, batch_tokens=2 * MAX_LEN, pad=PAD, pad_to=MAX_LEN))

    def batch(self, i: int) -> torch.Tensor:
        return self.batches[i % len(self.batches)]


_trainer = Trainer()


def build() -> nn.Module:
    return NMTModel()


def step(model: nn.Module, i: int) -> None:
    src = _trainer.batch(i)
    logits = model(src)
    nn.functional.cross_entropy(logits.flatten(0, 1), src.flatten(), ignore_index=PAD).backward()
