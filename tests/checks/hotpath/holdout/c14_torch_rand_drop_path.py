"""Clean: stochastic depth drawn from the torch RNG as a per-sample mask (timm-style drop_path), no Python random and no branch. Look-alike of pytorch/pytorch#95425: torch.compile does not work for layer drop."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/95425"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class DropPathBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.branch = nn.Linear(8, 8)
        self.drop_prob = 0.3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keep = 1.0 - self.drop_prob
        mask = torch.rand(x.shape[0], 1, device=x.device) < keep
        return x + self.branch(x) * mask / keep


def build() -> nn.Module:
    return DropPathBlock().train()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
