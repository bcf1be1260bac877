"""CC307: a head chosen by an attribute name computed from an argument (a constant name is not reported)."""
from torch import nn


class MultiHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head_a = nn.Linear(8, 2)
        self.head_b = nn.Linear(8, 2)

    def forward(self, x, task: str = "a"):
        y = self.head_a(x)  # a constant name: one attribute, no finding
        for name in ("a", "b"):
            y = y + getattr(self, f"head_{name}")(x)  # unrolled over constants: no finding
        return y + getattr(self, f"head_{task}")(x)  # expect: CC307


def build() -> nn.Module:
    return MultiHead()
