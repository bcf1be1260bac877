"""The trust tests' model (copied into each test's directory)."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


def build() -> Net:
    return Net()


def step(model: Net, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
