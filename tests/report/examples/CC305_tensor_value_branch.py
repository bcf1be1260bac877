"""CC305: Python branching on a tensor's value."""
from torch import nn


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        y = self.proj(x)
        if y.sum().item() > 0:  # expect: CC305
            return y
        return -y


def build() -> nn.Module:
    return Branchy()
