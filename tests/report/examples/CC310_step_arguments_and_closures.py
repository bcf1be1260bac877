"""CC310: what the loop hands the compiled code between calls: a changing Python number as an argument, a closure
rebuilt from a changing value, a Dropout's `p` (torch's forward reads it); a list emptied before every call and a
0-d tensor argument are not reported."""
import torch
from torch import nn


def make_gate(threshold):
    return lambda y: y * (y > threshold)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.0)
        self.gate = make_gate(0.0)
        self.taps = []

    def forward(self, x, scale, shift):
        y = self.gate(self.drop(self.proj(x)))
        self.taps.append(y.detach())  # emptied by the loop before every call: not reported
        return y * scale + shift


def build() -> nn.Module:
    return Block()


def step(model, i):
    model.taps.clear()
    model.drop.p = min(0.5, 0.05 * i)  # expect: CC310 warning (torch's Dropout.forward reads `p`)
    model.gate = make_gate(0.1 * i)  # expect: CC310 warning (a new closure cell value every call)
    with torch.no_grad():
        return model(
            torch.randn(2, 8),
            0.9**i,  # expect: CC310 warning (a Python float argument that changes every call)
            torch.tensor(float(i)),
        )
