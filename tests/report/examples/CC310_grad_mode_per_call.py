"""CC310: the step trains with grad and evaluates every fourth step under `torch.no_grad()`: Dynamo guards on the
grad mode, so the region compiles a second graph. One mode for every call is not reported."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x).relu()


def build() -> nn.Module:
    return Net()


def step(model, i):
    if i % 4 == 3:
        with torch.no_grad():
            return model(torch.randn(2, 8))  # expect: CC310 warning (under no_grad here, with grad below)
    model(torch.randn(2, 8)).sum().backward()
