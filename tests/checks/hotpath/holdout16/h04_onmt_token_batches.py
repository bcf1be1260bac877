"""Hazard: OpenNMT-py style batching by token count: each batch is padded to its own longest example, so both the
batch size and the sequence length change from step to step, and the compiled translation model first recompiles
on the new sizes (then again once a dimension turns dynamic). From pytorch/pytorch#93468 (OpenNMT with
torch.compile: variable batch shapes need `dynamic=True`, and compiling slowed the first steps down; the suggested
test was to "synthetically fix the dynamic size")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import token_batches

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/93468"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

PAD = 0


class NMTModel(nn.Module):
    def __init__(self, vocab: int = 20, dim: int = 8) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.encoder = nn.TransformerEncoderLayer(dim, nhead=2, dim_feedforward=16, batch_first=True, dropout=0.0)
        self.generator = nn.Linear(dim, vocab)

    def forward(self, src: torch.Tensor) -> torch.Tensor:
        return self.generator(self.encoder(self.embeddings(src)))


class Trainer:
    def __init__(self, pad_to: int | None) -> None:
        g = torch.Generator().manual_seed(0)
        lengths = [3, 5, 4, 7, 6, 9, 5, 8, 4, 6, 10, 7, 5, 9, 8, 6, 4, 7, 9, 10]
        self.examples = [torch.randint(1, 20, (n,), generator=g) for n in lengths]
        self.pad_to = pad_to
        self.batches = list(token_batches(self.examples, batch_tokens=20, pad=PAD, pad_to=pad_to))

    def batch(self, i: int) -> torch.Tensor:
        return self.batches[i % len(self.batches)]


_trainer = Trainer(pad_to=None)


def build() -> nn.Module:
    return NMTModel()


def step(model: nn.Module, i: int) -> None:
    src = _trainer.batch(i)
    logits = model(src)
    nn.functional.cross_entropy(logits.flatten(0, 1), src.flatten(), ignore_index=PAD).backward()
