"""CC302: a Python flag assigned in forward and read there."""
from torch import nn


class Warmup(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.first = True

    def forward(self, x):
        if self.first:
            x = x * 2
        self.first = False  # expect: CC302
        return self.proj(x)


def build() -> nn.Module:
    return Warmup()
