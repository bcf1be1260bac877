"""Hazard: the loop rebuilds the task head every step through a factory that defines the head's class inside the
function, so each step installs an instance of a brand-new class; the compiled `forward` guards on the type of
`self.head` and recompiles every step until the recompile limit. From pytorch/pytorch#167504 (compiling in a loop:
`hit config.recompile_limit (8)`, last reason `___check_type_id(self, ...)` at `a = self.net1(x)`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/167504"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


def make_head(dim: int, num_classes: int) -> nn.Module:
    class LinearProbe(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(dim, num_classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.proj(torch.relu(x))

    return LinearProbe()


class ProbedBackbone(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net1 = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
        self.head = make_head(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.net1(x)
        return self.head(a)


def build() -> nn.Module:
    return ProbedBackbone()


def step(model: nn.Module, i: int) -> None:
    model.head = make_head(8, 4)  # a fresh probe per evaluation round
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    nn.functional.cross_entropy(model(x), y).backward()
