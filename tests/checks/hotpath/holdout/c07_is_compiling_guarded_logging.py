"""Clean: the debug logging in forward sits behind `if not torch.compiler.is_compiling()`, so the traced graph never sees it. Look-alike of huggingface/diffusers#3933 (Graph compile breaks due to logging.info), fixed the way isayevlab/aimnetcentral#109 gates its eager-only code."""
from __future__ import annotations

import logging

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/issues/3933"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

logger = logging.getLogger("holdout.c07")


class UNetBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            logger.info("Forward upsample size to force interpolation output size.")
            print("eager-only debug line")
        return self.conv(x)


def build() -> nn.Module:
    return UNetBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
