"""Hazard: a discrete-latent (VQ/Gumbel) encoder holds its sampler as `functools.partial(F.gumbel_softmax, tau=..., hard=...)`; the trainer anneals the temperature by rebuilding the partial on the model every step, and Dynamo guards on the partial's keyword values, so the compiled forward recompiles when tau moves. From pytorch/pytorch#110639 (Dynamo guards on functools.partial keywords)."""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/pull/110639"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class GumbelQuantizer(nn.Module):
    def __init__(self, dim: int = 8, n_codes: int = 8, tau: float = 1.0) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, n_codes)
        self.codebook = nn.Embedding(n_codes, dim)
        self.sample = functools.partial(F.gumbel_softmax, tau=tau, hard=False, dim=-1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        soft_one_hot = self.sample(self.proj(z))
        return soft_one_hot @ self.codebook.weight


class DVAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.quantizer = GumbelQuantizer()
        self.decoder = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.quantizer(self.encoder(x)))


class TemperatureAnnealer:
    """Exponential tau schedule applied by the trainer after each step (DALL-E dVAE style)."""

    def __init__(self, start: float = 1.0, end: float = 1 / 16, rate: float = 0.7) -> None:
        self.start, self.end, self.rate = start, end, rate

    def apply(self, model: DVAE, step: int) -> None:
        tau = max(self.end, self.start * self.rate**step)
        model.quantizer.sample = functools.partial(F.gumbel_softmax, tau=tau, hard=False, dim=-1)


_annealer = TemperatureAnnealer()


def build() -> nn.Module:
    return DVAE()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    F.mse_loss(model(x), x).backward()
    _annealer.apply(model, i + 1)
