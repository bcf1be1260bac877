"""Hazard: an exact-GP marginal likelihood reads its noise floor from a settings class (`observation_noise_floor.value()`, a float held on the class in another module, gpytorch.settings style); the fitting loop anneals it with `with observation_noise_floor(v):` every step, so the compiled forward, which baked the class attribute in, recompiles when it changes. From pytorch/pytorch#177191 (guards on class attribute literals, so a mutated class attribute now recompiles)."""
from __future__ import annotations

import math

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_a import observation_noise_floor

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/pull/177191"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # measured on the H100 machine


class RBFKernel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))
        self.raw_outputscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        ls = nn.functional.softplus(self.raw_lengthscale)
        d2 = torch.cdist(x1 / ls, x2 / ls).pow(2)
        return nn.functional.softplus(self.raw_outputscale) * torch.exp(-0.5 * d2)


class ExactGPMarginalLogLikelihood(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.covar_module = RBFKernel()
        self.raw_noise = nn.Parameter(torch.tensor([-2.0]))

    def forward(self, train_x: torch.Tensor, train_y: torch.Tensor) -> torch.Tensor:
        n = train_x.shape[0]
        noise = nn.functional.softplus(self.raw_noise) + observation_noise_floor.value()
        K = self.covar_module(train_x, train_x) + noise * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(train_y.unsqueeze(-1), L)
        quad = (train_y.unsqueeze(-1) * alpha).sum()
        logdet = 2 * torch.log(torch.diagonal(L)).sum()
        return -0.5 * (quad + logdet + n * math.log(2 * math.pi)) / n


def build() -> nn.Module:
    return ExactGPMarginalLogLikelihood()


_X = torch.linspace(0, 1, 12).unsqueeze(-1)
_Y = torch.sin(6 * _X.squeeze(-1))


def step(model: nn.Module, i: int) -> None:
    floor = max(1e-6, 1e-2 * 0.5**i)  # start with a generous jitter, tighten it as the hyperparameters settle
    with observation_noise_floor(floor):
        loss = -model(_X, _Y)
    loss.backward()
