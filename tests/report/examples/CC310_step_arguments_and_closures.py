"""CC310: what the loop hands the compiled code between calls: a changing Python number or flag as an argument, a
closure rebuilt from a changing value, a Dropout's `p` (torch's forward reads it), an attribute set on every
submodule through `model.apply` (a lambda, a def of the step or a `partial`); a list emptied before every call and a
0-d tensor argument are not reported."""
from functools import partial

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
        self.act = partial(nn.functional.leaky_relu, negative_slope=0.01)
        self.taps = []
        self.drop_path = 0.0
        self.temperature = 1.0
        self.warm = False

    def forward(self, x, scale, shift, sample=False):
        y = self.act(self.gate(self.drop(self.proj(x))))
        self.taps.append(y.detach())  # emptied by the loop before every call: not reported
        if sample:
            y = y / self.temperature
        return y * scale * (1 - self.drop_path) + shift * self.warm


def set_temperature(module, value):
    if isinstance(module, Block):
        module.temperature = value  # expect: CC310 warning (the step applies it with `partial(..., value=1.0 + i)`)


def build() -> nn.Module:
    return Block()


def step(model, i):
    model.taps.clear()
    model.drop.p = min(0.5, 0.05 * i)  # expect: CC310 warning (torch's Dropout.forward reads `p`)
    model.gate = make_gate(0.1 * i)  # expect: CC310 warning (a new closure cell value every call)
    model.act = partial(nn.functional.leaky_relu, negative_slope=0.01 * (i + 1))  # expect: CC310 warning
    rate = 0.01 * i
    model.apply(lambda m: setattr(m, "drop_path", rate) if isinstance(m, Block) else None)  # expect: CC310 warning

    def warm_up(m):
        m.warm = i < 4  # expect: CC310 warning (set through `model.apply` on every submodule)

    model.apply(warm_up)
    model.apply(partial(set_temperature, value=1.0 + i))
    with torch.no_grad():
        return model(
            torch.randn(2, 8),
            0.9**i,  # expect: CC310 warning (a Python float argument that changes every call)
            torch.tensor(float(i)),
            sample=i % 2 == 0,  # expect: CC310 warning (a flag that flips every call: one graph per value)
        )
