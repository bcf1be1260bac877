"""Clean: the same HuBERT-style span masking in the compiled training forward, but the spans are drawn with the torch RNG (torch.rand for span starts, a max-pool to widen them), so the mask is a tensor computed in the graph and nothing leaves Python. The hazard is pytorch/pytorch#97511 (fairseq HuBERT, numpy `compute_mask_indices` inside the compiled forward); this twin applies the usual fix of rewriting the mask sampler with torch ops (as huggingface/transformers#24668 did for wav2vec2's copy of the same function)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import compute_mask_indices_torch

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/97511"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
        mask_indices = compute_mask_indices_torch((b, t), self.mask_prob, self.mask_length, device=x.device)
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
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    (loss * mask.flatten()).sum().backward()  # masked-prediction loss without boolean indexing
