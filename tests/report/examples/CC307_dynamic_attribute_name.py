"""CC307: a head chosen by a computed attribute name."""
from torch import nn


class MultiHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 2)
        self.task = "a"

    def forward(self, x):
        return getattr(self, f"head_{self.task}")(x)  # expect: CC307


def build() -> nn.Module:
    return MultiHead()
