"""Hazard: a torchrec-style position-weighted feature processor rebuilds a KeyedJaggedTensor inside the compiled
forward and asks it for `length_per_key()`, which the KJT computes lazily with `.tolist()` on the offsets; Dynamo
graph-breaks on the data-dependent list (in the helper and again in the forward's resume). From meta-pytorch/torchrec#2306 (refactor _maybe_compute_length_per_key to
avoid graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_a import KeyedJaggedTensor

LABEL = "item-branch"
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/2306"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}

KEYS = ["f1", "f2"]


class PositionWeightedModuleCollection(nn.Module):
    def __init__(self, max_len: int = 8, dim: int = 8) -> None:
        super().__init__()
        self.position_weights = nn.Parameter(torch.ones(max_len))
        self.embedding = nn.EmbeddingBag(32, dim, mode="sum")
        self.proj = nn.Linear(dim * len(KEYS), 8)

    def forward(self, features: KeyedJaggedTensor) -> torch.Tensor:
        lengths = features.lengths()
        positions = torch.arange(features.values().numel()) - torch.repeat_interleave(features.offsets()[:-1], lengths, output_size=features.values().numel())
        weights = self.position_weights[positions]
        per_key = features.length_per_key()
        pooled = []
        for values, w, offsets in zip(
            features.values().split(per_key), weights.split(per_key), features.offsets()[:-1].view(len(KEYS), -1)
        ):
            pooled.append(self.embedding(values, offsets - offsets[0], per_sample_weights=w))
        return self.proj(torch.cat(pooled, dim=1))


def build() -> nn.Module:
    return PositionWeightedModuleCollection()


def step(model: nn.Module, i: int) -> None:
    stride = 2
    lengths = torch.tensor([1, 2, 2, 1])  # f1: two samples, f2: two samples; 6 ids in all
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
    values = torch.randint(0, 32, (6,))
    kjt = KeyedJaggedTensor(KEYS, values, offsets, stride)
    model(kjt).sum().backward()
