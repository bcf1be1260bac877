"""Hazard: a forward hook registered once on a submodule appends every output to a Python list that nobody clears. From pytorch/pytorch#96722: module.register_forward_hook only captures some layers when using torch.compile."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/96722"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)
        self.activations: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    model = Model()

    def keep(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        model.activations.append(output.detach())

    model.fc1.register_forward_hook(keep)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
