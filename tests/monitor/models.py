"""Small models for the monitor tests: several regions, several instances of one class, known hazards."""

from __future__ import annotations

import torch
from torch import nn


class Scaled(nn.Module):
    """A block whose Python-int `scale` differs per instance: Dynamo compiles one cache entry per instance."""

    def __init__(self, scale: int) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.lin(x)) * self.scale


class Counting(nn.Module):
    """The hazard: a Python-int counter incremented in forward, so every call is a recompile of this instance."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return self.lin(x) + self.calls


class Breaking(nn.Module):
    """One graph break in forward (two frames: forward and its resume function), plus a compiled extra method."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x)
        torch._dynamo.graph_break()
        return self.b(y)

    def decode(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(x).tanh()


class Net(nn.Module):
    """Three `Scaled` blocks, a `Breaking` head and a `Counting` tail."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(Scaled(i + 1) for i in range(3))
        self.head = Breaking()
        self.tail = Counting()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.tail(self.head.decode(self.head(x)))
