"""Clean: the same probe-per-round loop, but the head's class is defined once at module level and each step only
builds a new instance of it; the guards on the head's type keep passing and its new parameters are graph inputs,
so the forward compiles once. From pytorch/pytorch#167504 (the recompiles came from a new class object each
iteration; the fix is to define the module class once)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/167504"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LinearProbe(nn.Module):
    def __init__(self, dim: int, num_classes: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.relu(x))


class ProbedBackbone(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net1 = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        self.head = LinearProbe(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.net1(x)
        return self.head(a)


def build() -> nn.Module:
    return ProbedBackbone()


def step(model: nn.Module, i: int) -> None:
    model.head = LinearProbe(8, 4)  # a fresh probe per evaluation round
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    nn.functional.cross_entropy(model(x), y).backward()
