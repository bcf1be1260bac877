"""CC306: an environment variable read every call."""
import os

from torch import nn


class Debuggable(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        if os.environ.get("DEBUG_PROJ"):  # expect: CC306
            x = x.clone()
        return self.proj(x)


def build() -> nn.Module:
    return Debuggable()
