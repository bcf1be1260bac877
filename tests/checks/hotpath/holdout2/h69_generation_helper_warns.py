"""Hazard: the compiled generation step calls transformers' special-token helper, which logs a warning on every call (a Logger method in a helper module). From tenstorrent/tt-torch#852: Disable logger level graph breaks."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = "graph-break"
SOURCE = "https://github.com/tenstorrent/tt-torch/issues/852"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 8)
        self.pad_token_id = None
        self.eos_token_id = 2

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        pad = _helpers_d.prepare_special_tokens(self.pad_token_id, self.eos_token_id)
        return self.lm_head(hidden) + pad


def build() -> nn.Module:
    return Generator()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
