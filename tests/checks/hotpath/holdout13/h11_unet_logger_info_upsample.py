"""Hazard: a diffusers-style UNet logs from inside its compiled forward (`logger.info("Forward upsample size to force interpolation output size.")`) whenever the latent size is not a multiple of the upsampling factor, which is true for every call at this resolution; a `logging.Logger` method call cannot be traced, so the forward is split into two graphs around it and every step leaves the compiled code to log eagerly. From pytorch/pytorch#110886 ([Dynamo] way to suppress logging code in compiled region)."""
from __future__ import annotations

import logging

import torch
from torch import nn

logger = logging.getLogger("diffusers.models.unet_2d_condition")

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/110886"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class UNet2DConditionModel(nn.Module):
    def __init__(self, channels: int = 4, num_upsamplers: int = 1) -> None:
        super().__init__()
        self.num_upsamplers = num_upsamplers
        self.down = nn.Conv2d(channels, 8, 3, stride=2, padding=1)
        self.mid = nn.Conv2d(8, 8, 3, padding=1)
        self.up = nn.Conv2d(8, channels, 3, padding=1)

    def forward(self, sample: torch.Tensor) -> torch.Tensor:
        default_overall_up_factor = 2**self.num_upsamplers
        forward_upsample_size = False
        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            logger.info("Forward upsample size to force interpolation output size.")
            forward_upsample_size = True
        h = torch.nn.functional.silu(self.mid(self.down(sample)))
        size = sample.shape[-2:] if forward_upsample_size else None
        h = torch.nn.functional.interpolate(h, size=size, scale_factor=None if size else 2.0, mode="nearest")
        return self.up(h)


def build() -> nn.Module:
    return UNet2DConditionModel()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 9, 9))
