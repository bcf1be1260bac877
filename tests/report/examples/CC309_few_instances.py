"""CC309: three blocks compiled one by one, each reading its own Python depth: three compiles instead of one (under
the limit, still the reuse regional compilation is for is lost). A value all blocks share is not reported."""
import torch
from torch import nn

REGION = "blocks.*"


class Block(nn.Module):
    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth = depth
        self.scale = 4
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return x + self.proj(x) / (self.scale * 2**self.depth)  # expect: CC309


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for d in range(3))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return torch.tanh(x)


def build() -> nn.Module:
    return Stack()
