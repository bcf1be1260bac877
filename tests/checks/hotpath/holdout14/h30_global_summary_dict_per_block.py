"""Hazard: each sub-block is compiled as its own region and records itself into a module-level `summary` dict (a tracker helper in another module) keyed by its `self.name`, which the parent module rebinds to a fresh dict on every call; the compiled forward specializes on the name constant it writes under, so the second block fails the guard and compiles the identical tensor graph again (the residual bytecode, not the graph, differs). From pytorch/pytorch#167596 (guard on constants only if the graph is specialized: the `summary` update leads to a recompilation)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14 import _helpers_b as tracker

LABEL = "helper-module"
SOURCE = "https://github.com/pytorch/pytorch/issues/167596"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "blocks.*"


class SubMod(nn.Module):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.sin(self.proj(x))
        self.add_summary()
        return out

    def add_summary(self) -> None:
        tracker.add_summary(self.name, 0)


class Mod(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleDict({"mod_a": SubMod("mod_a"), "mod_b": SubMod("mod_b")})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tracker.reset_summary()
        return self.blocks["mod_b"](self.blocks["mod_a"](x))


def build() -> nn.Module:
    return Mod()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
