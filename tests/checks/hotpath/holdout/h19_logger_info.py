"""Hazard: forward calls logger.info (diffusers UNet "Forward upsample size to force interpolation output size"). From huggingface/diffusers#3933: Graph compile breaks due to logging.info."""
from __future__ import annotations

import logging

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/diffusers/issues/3933"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

logger = logging.getLogger("holdout.h19")


class UNetBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] % 2 == 0:
            logger.info("Forward upsample size to force interpolation output size.")
        return self.conv(x)


def build() -> nn.Module:
    return UNetBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
