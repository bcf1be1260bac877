"""Clean: the same Gumbel-softmax dVAE, but the partial is built once with the fixed keywords only and the annealed temperature is a buffer updated in place by the trainer and applied as a tensor division in forward, so nothing the compiled forward guards on changes and it compiles once. Look-alike of h04, from pytorch/pytorch#110639."""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/pull/110639"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GumbelQuantizer(nn.Module):
    def __init__(self, dim: int = 8, n_codes: int = 8, tau: float = 1.0) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, n_codes)
        self.codebook = nn.Embedding(n_codes, dim)
        self.register_buffer("tau", torch.tensor(tau))
        self.sample = functools.partial(F.gumbel_softmax, tau=1.0, hard=False, dim=-1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        soft_one_hot = self.sample(self.proj(z) / self.tau)  # gumbel_softmax(l / t, tau=1) == gumbel_softmax(l, tau=t)
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
    def __init__(self, start: float = 1.0, end: float = 1 / 16, rate: float = 0.7) -> None:
        self.start, self.end, self.rate = start, end, rate

    def apply(self, model: DVAE, step: int) -> None:
        model.quantizer.tau.fill_(max(self.end, self.start * self.rate**step))


_annealer = TemperatureAnnealer()


def build() -> nn.Module:
    return DVAE()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    F.mse_loss(model(x), x).backward()
    _annealer.apply(model, i + 1)
