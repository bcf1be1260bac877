"""CC305: a tensor's value read by Python control flow without `.item()`; shape and `is None` tests are fine."""
import torch
from torch import nn


class Gated(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("scale", torch.ones(()), persistent=False)
        self.bias_extra = None
        self.layers = 2

    def forward(self, x):
        y = self.proj(x)
        if int((y > 0).sum()) > 8:  # expect: CC305
            y = y * 2
        if float(self.scale) > 0.5:  # expect: CC305
            y = y * 3
        if bool(y.isfinite().all()):  # expect: CC305
            y = y + 1
        if y.sum() > 0:  # expect: CC305
            y = -y
        while y.abs().max() > 10:  # expect: CC305
            y = y / 2
        if x.shape[0] > 1 and self.bias_extra is None and int(self.layers) > 1:
            y = y * 1
        return y


def build() -> nn.Module:
    return Gated()
