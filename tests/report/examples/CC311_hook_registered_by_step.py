"""CC311: the loop registers a forward hook that returns a value on a compiled module after the first compiled call;
an observing hook that returns nothing (it stores the activation) is not reported."""
import torch
from torch import nn


def log_output(module, args, out):
    return out


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x)


def build() -> nn.Module:
    return Decoder()


def step(model, i):
    seen = {}

    def record(module, args, out):
        seen["proj"] = out.detach()

    if i == 2:
        model.proj.register_forward_hook(log_output)  # expect: CC311
    handle = model.proj.register_forward_hook(record)
    with torch.no_grad():
        out = model(torch.randn(2, 8))
    handle.remove()
    return out
