"""Hazard: the attention call logs which kernel it uses through torchtune's lru_cache'd `log_once` helper on every forward. From meta-pytorch/torchtune#2771: [compile] Fix graphbreaks in moe split; scale_grad (log_once in _attention_call)."""

from __future__ import annotations

import logging

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = "graph-break"
SOURCE = "https://github.com/meta-pytorch/torchtune/pull/2771"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}

_log = logging.getLogger("holdout2.h70")


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        _helpers_d.log_once(_log, "Using scaled_dot_product_attention for attention computation.")
        return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]


def build() -> nn.Module:
    return Attention()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
