"""Hazard: an EDM/k-diffusion style Euler sampler passes each step's noise level `sigma` into the compiled denoiser as a plain Python float taken from its Karras schedule list, so the guard on the float fails on the second step and Dynamo recompiles (then treats it as dynamic). From pytorch/pytorch#149406 (recompiles due to a Python float object, `L['y'] == 1.5`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_a import EulerSampler

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/149406"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class EDMPrecond(nn.Module):
    def __init__(self, dim: int = 8, sigma_data: float = 0.5) -> None:
        super().__init__()
        self.sigma_data = sigma_data
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor, sigma: float) -> torch.Tensor:
        c_skip = self.sigma_data**2 / (sigma**2 + self.sigma_data**2)
        c_out = sigma * self.sigma_data / (sigma**2 + self.sigma_data**2) ** 0.5
        c_in = 1 / (self.sigma_data**2 + sigma**2) ** 0.5
        return c_skip * x + c_out * self.net(c_in * x)


_sampler = EulerSampler(steps=8)


def build() -> nn.Module:
    return EDMPrecond()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    _sampler.denoise(model, x, i)
