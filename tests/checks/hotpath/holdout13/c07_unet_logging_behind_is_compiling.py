"""Clean: the same diffusers-style UNet forward with the upsample-size log message, but the `logger.info` call sits behind `if not torch.compiler.is_compiling():`, so the traced forward never meets the logger and compiles once while eager runs still log. Look-alike of pytorch/pytorch#110886 (suppressing logging code in a compiled region)."""
from __future__ import annotations

import logging

import torch
from torch import nn

logger = logging.getLogger("diffusers.models.unet_2d_condition")

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/110886"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
            if not torch.compiler.is_compiling():
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
