"""CC308: BatchNorm with momentum=None, in training mode, inside the region."""
from torch import nn

REGION = "block"
LOCATION = "block.norm"


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.BatchNorm1d(8, momentum=None)  # expect: CC308

    def forward(self, x):
        return self.norm(self.proj(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(x)


def build() -> nn.Module:
    return Net().train()
