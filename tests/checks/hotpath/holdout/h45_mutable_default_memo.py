"""Hazard: a helper method memoises rotary tables in a mutable default dict (`cache={}`), so the default's contents change between the first and later calls. From pytorch/pytorch#21545 (pytorch/pytorch#29833 "Check for mutable default parameters": state hidden in a default argument)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "mutable-default"
SOURCE = "https://github.com/pytorch/pytorch/issues/21545"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def _positions(self, n: int, cache={}) -> torch.Tensor:  # noqa: B006 - the hazard under test
        if n not in cache:
            cache[n] = torch.arange(n, dtype=torch.float32) / n
        return cache[n]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) + self._positions(x.shape[-1])


def build() -> nn.Module:
    Model._positions.__defaults__[0].clear()
    return Model()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
