"""Clean: a compiled runner calls a module it is handed on each call and the driver builds a fresh module instance for every call; the report saw unlimited recompiles as each dying instance invalidated its cache entry, but with built-in nn modules inlined (the default on torch 2.13) the instance is not guarded by identity and one graph serves all of them. From pytorch/pytorch#130776 (unlimited recompiles because the nn.Module is going out of scope)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/130776"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Mod1(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


class Runner(nn.Module):
    """`fn(x, mod): return mod(x)` from the report, as the compiled region."""

    def forward(self, x: torch.Tensor, mod: nn.Module) -> torch.Tensor:
        return mod(x)


def build() -> nn.Module:
    return Runner()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(5, 5), Mod1())
