"""Hazard: a debugging `print` of each layer's activation norm (`z.norm().item()`) inside the `for` loop over layers; a graph break inside a Python loop makes Dynamo give up on the whole forward frame, so the model silently runs eager. From pytorch/pytorch#116981 (graph breaks in for/while loops become a frame skip)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/pytorch/pytorch/pull/116981"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 1}

DEBUG_NORMS = True


class ResidualMLP(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = x
        for layer in self.layers:
            z = z + torch.tanh(layer(z))
            if DEBUG_NORMS:
                print(f"activation norm {z.norm().item():.3f}")
        return z


def build() -> nn.Module:
    return ResidualMLP()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
