"""Hazard: a DLRM-style model whose sparse arch is a torchrec-like `EmbeddingBagCollection`: splitting the
`KeyedJaggedTensor` per feature calls `length_per_key()`, which turns the lengths into a Python list with
`.tolist()` (and caches it on the KJT) inside the compiled forward, so Dynamo breaks the graph there and the
per-feature split sizes, different every batch, are specialised in what follows. From meta-pytorch/torchrec#1888
(torch.compile over a torchrec model: many dynamo errors and a forward 10x slower than eager)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import EmbeddingBagCollectionLite, KeyedJaggedTensorLite, random_kjt

LABEL = "library-object"
SOURCE = "https://github.com/meta-pytorch/torchrec/issues/1888"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 4}

KEYS = ["f1", "f2"]


class SparseNN(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.dense_arch = nn.Sequential(nn.Linear(4, dim), nn.ReLU())
        self.sparse_arch = EmbeddingBagCollectionLite({k: 16 for k in KEYS}, dim)
        self.over_arch = nn.Linear(dim * (len(KEYS) + 1), 1)

    def forward(self, dense: torch.Tensor, features: KeyedJaggedTensorLite) -> torch.Tensor:
        embedded = torch.cat([self.dense_arch(dense), self.sparse_arch(features)], dim=1)
        return self.over_arch(embedded).squeeze(1)


_gen = torch.Generator()


def build() -> nn.Module:
    _gen.manual_seed(0)
    return SparseNN()


def step(model: nn.Module, i: int) -> None:
    features = random_kjt(KEYS, batch=4, num_embeddings=16, generator=_gen)
    dense, label = torch.randn(4, 4, generator=_gen), torch.rand(4, generator=_gen)
    nn.functional.binary_cross_entropy_with_logits(model(dense, features), label).backward()
