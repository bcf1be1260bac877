"""Clean: forward reads hyperparameters from an OmegaConf-like config object whose attribute access goes through a plain custom __getattr__; reported to graph-break, it compiles once on torch 2.13. From pytorch/pytorch#138224: OmegaConf `__getattr__` will cause graph breaks."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout import _thirdparty

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/138224"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cfg = _thirdparty.AttrConfig(residual_scale=0.5, use_norm=True)
        self.linear = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear(x)
        if self.cfg.use_norm:
            h = self.norm(h)
        return x + self.cfg.residual_scale * h


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
