"""Hazard: a HuBERT-style encoder applies span masking during training by calling fairseq's numpy `compute_mask_indices` (np.random picks the span starts) from inside the compiled forward and converting the result with torch.from_numpy; Dynamo cannot trace the numpy RNG, so every training forward is split around it. From pytorch/pytorch#97511 (fairseq HuBERT under torch.compile: the traceback runs through `<graph break in apply_mask>` at `mask_indices = torch.from_numpy(mask_indices).to(x.device)`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import compute_mask_indices_numpy

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/97511"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 4}


class HubertLike(nn.Module):
    def __init__(self, dim: int = 8, mask_prob: float = 0.5, mask_length: int = 2) -> None:
        super().__init__()
        self.mask_prob = mask_prob
        self.mask_length = mask_length
        self.feature_projection = nn.Linear(dim, dim)
        self.mask_emb = nn.Parameter(torch.zeros(dim).uniform_())
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.final_proj = nn.Linear(dim, 4)

    def apply_mask(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, _ = x.shape
        mask_indices = compute_mask_indices_numpy((b, t), self.mask_prob, self.mask_length)
        mask_indices = torch.from_numpy(mask_indices).to(x.device)
        x = torch.where(mask_indices[..., None], self.mask_emb.to(x.dtype), x)
        return x, mask_indices

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.feature_projection(features)
        x, mask_indices = self.apply_mask(x)
        return self.final_proj(self.encoder(x)), mask_indices


def build() -> nn.Module:
    return HubertLike()


def step(model: nn.Module, i: int) -> None:
    features = torch.randn(2, 10, 8)
    targets = torch.randint(0, 4, (2, 10))
    logits, mask = model(features)
    loss = nn.functional.cross_entropy(logits[mask], targets[mask]) if mask.any() else logits.sum() * 0
    loss.backward()
