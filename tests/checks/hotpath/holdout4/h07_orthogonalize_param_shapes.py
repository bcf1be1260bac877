"""Hazard: a compiled Newton-Schulz orthogonalisation module is applied to every weight matrix in turn, and Dynamo keeps parameter shapes static, so each distinct parameter shape is a recompile until `recompile_limit` is hit, from microsoft/dion#23 (recompile_limit reached: "Guard failed on a parameter")."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/microsoft/dion/issues/23"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "orthogonalize"


class NewtonSchulz(nn.Module):
    def __init__(self, steps: int = 2) -> None:
        super().__init__()
        self.steps = steps

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        a, b, c = 3.4445, -4.7750, 2.0315
        X = X / (X.norm() + 1e-7)
        for _ in range(self.steps):
            A = X @ X.T
            X = a * X + (b * A + c * A @ A) @ X
        return X


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Linear(4, 8), nn.Linear(8, 8))
        self.orthogonalize = NewtonSchulz()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def build() -> nn.Module:
    return Net()


def step(model: nn.Module, i: int) -> None:
    model.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    with torch.no_grad():  # post-orthogonalize: project every matrix parameter back after the update
        for p in model.body.parameters():
            if p.ndim == 2:
                p.copy_(model.orthogonalize(p))
