"""The precompile tests' model (copied into each test's directory, where a test may rewrite its source): a block
whose forward has a graph break (two frames, one resume function), run by an inference step."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.lin(x)) * 2
        torch._dynamo.graph_break()
        return y + 1


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


def build_local() -> nn.Module:
    """A model whose block is a class defined inside this function: torch cannot save a guard on its type."""

    class Local(Block):
        pass

    torch.manual_seed(0)
    net = Net()
    net.block = Local()
    return net
