"""The restart tests' model (copied into each test's directory, where a test may rewrite its source)."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)


def build() -> Net:
    torch.manual_seed(0)
    return Net()


def step(model: Net, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
