"""Hazard: forward takes a mutable default list (`history=[]`) and appends to it, so the default grows across calls. From pytorch/pytorch#21545 (fixed for TorchScript by pytorch/pytorch#29833 "Check for mutable default parameters": `def test(x=[]): x.append(1)` silently accumulates)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "mutable-default"
SOURCE = "https://github.com/pytorch/pytorch/issues/21545"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, history=[]) -> torch.Tensor:  # noqa: B006 - the hazard under test
        h = self.linear(x)
        history.append(h.detach())
        return h / len(history)


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
