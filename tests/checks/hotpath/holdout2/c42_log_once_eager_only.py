"""Clean: the same kernel-choice message, logged only when not compiling. From meta-pytorch/torchtune#2771 (the log moved out of the traced path)."""

from __future__ import annotations

import logging

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchtune/pull/2771"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

_log = logging.getLogger("holdout2.c42")


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if not torch.compiler.is_compiling():
            _helpers_d.log_once(_log, "Using scaled_dot_product_attention for attention computation.")
        return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]


def build() -> nn.Module:
    return Attention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
