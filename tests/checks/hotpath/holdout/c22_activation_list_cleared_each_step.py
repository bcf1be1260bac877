"""Clean: a forward hook appends activations to a list, and the loop clears that list before every step, so each call starts from the same empty list. Look-alike of pytorch/pytorch#96722 (the MNIST script there calls activations.clear() per batch)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/96722"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
    model.activations.clear()
    with torch.no_grad():
        model(torch.randn(4, 8))
