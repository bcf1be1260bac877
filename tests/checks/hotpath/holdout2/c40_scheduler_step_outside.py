"""Clean: the pipeline loop calls the scheduler's step() after the compiled UNet returns, so only the UNet is traced. From huggingface/diffusers#4347 (the pipeline's denoising loop)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/4347"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class UNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Linear(8, 8)

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        return self.conv(latents).tanh()


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.unet = UNet()
        self.scheduler = _helpers_d.EulerScheduler()
        self.latents = torch.randn(4, 8)

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        return self.unet(latents)


REGION = "unet"


def build() -> nn.Module:
    return Pipeline()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        noise_pred = model.unet(model.latents)
        model.latents = model.scheduler.step(noise_pred, model.latents)
