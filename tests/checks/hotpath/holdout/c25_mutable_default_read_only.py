"""Clean: forward has mutable default arguments (a list of reduction dims, a dict of options) that are only ever read, never mutated. Look-alike of pytorch/pytorch#21545 (mutable default parameters are only a problem when mutated)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/21545"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, dims=[-1], opts={"eps": 1e-5}) -> torch.Tensor:  # noqa: B006 - read-only defaults
        h = self.linear(x)
        return h / (h.pow(2).mean(dim=dims, keepdim=True) + opts["eps"]).sqrt()


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
