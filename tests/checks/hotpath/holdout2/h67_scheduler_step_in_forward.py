"""Hazard: a denoiser wrapper calls its diffusers-style scheduler's step() inside the compiled forward; step() advances a Python _step_index. From huggingface/diffusers#4347: add a step_index counter."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = "library-object"
SOURCE = "https://github.com/huggingface/diffusers/pull/4347"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Denoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.unet = nn.Linear(8, 8)
        self.scheduler = _helpers_d.EulerScheduler()

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        noise_pred = self.unet(latents)
        return self.scheduler.step(noise_pred, latents)


def build() -> nn.Module:
    return Denoiser()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
