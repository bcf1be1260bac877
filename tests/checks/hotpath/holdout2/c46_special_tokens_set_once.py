"""Clean: the generation model resolves its pad token once at build, so the compiled step only adds a constant. From tenstorrent/tt-torch#852 (special tokens prepared before generation)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = None
SOURCE = "https://github.com/tenstorrent/tt-torch/issues/852"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Generator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lm_head = nn.Linear(8, 8)
        self.pad_token_id = _helpers_d.prepare_special_tokens(None, 2)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden) + self.pad_token_id


def build() -> nn.Module:
    return Generator()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
