"""Hazard: the UNet's forward logs with `logger.info("Forward upsample size to force interpolation output size.")` whenever the latent size is not a multiple of the upsampling factor, a logging call inside the compiled forward. From pytorch/pytorch#108650 (Unsupported: inline in skipfiles: Logger.info, from diffusers unet_2d_condition.py)."""
from __future__ import annotations

import logging

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/issues/108650"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

logger = logging.getLogger("holdout3.unet_2d_condition")


class UNet2DConditionModel(nn.Module):
    def __init__(self, channels: int = 4, num_upsamplers: int = 1) -> None:
        super().__init__()
        self.num_upsamplers = num_upsamplers
        self.down = nn.Conv2d(channels, 8, 3, stride=2, padding=1)
        self.up = nn.Conv2d(8, channels, 3, padding=1)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        default_overall_up_factor = 2**self.num_upsamplers
        forward_upsample_size = False
        upsample_size = None
        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            logger.info("Forward upsample size to force interpolation output size.")
            forward_upsample_size = True
        h = torch.relu(self.down(sample)) + timestep.view(-1, 1, 1, 1)
        if forward_upsample_size:
            upsample_size = sample.shape[-2:]
        h = nn.functional.interpolate(h, size=upsample_size, scale_factor=None if upsample_size else 2.0)
        return self.up(h)


def build() -> nn.Module:
    return UNet2DConditionModel()


def step(model: nn.Module, i: int) -> None:
    # a 100x100 image gives 13x13 latents: odd, so the UNet forwards the upsample size
    with torch.no_grad():
        model(torch.randn(1, 4, 13, 13), torch.tensor([999.0 - i]))
