"""CC303: a float running average kept as a Python attribute."""
from torch import nn


class Ema(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.scale = 1.0

    def forward(self, x):
        self.scale = 0.9 * self.scale + 0.1  # expect: CC303
        return self.proj(x) * self.scale


def build() -> nn.Module:
    return Ema()
