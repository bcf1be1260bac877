"""CC302: a flag the forward sets is a recompile when its value changes between calls; not when the forward writes
the value it already holds (`self.initialized = True` while True), nor when the step sets it to one constant before
every call (float8's `sync(model)` marking each layer synced), so every call sees the same value."""
import torch
from torch import nn


class Float8Linear(nn.Linear):
    def __init__(self) -> None:
        super().__init__(8, 8)
        self.initialized = True
        self.synced = False
        self.calls_seen = False

    def forward(self, x):
        if not self.synced:
            raise RuntimeError("call sync(model) first")
        y = super().forward(x)
        self.initialized = True
        self.synced = False
        if not self.calls_seen:
            y = y * 2
        self.calls_seen = True  # expect: CC302
        return y


def sync(model):
    for layer in model.modules():
        if isinstance(layer, Float8Linear):
            layer.synced = True


def build() -> nn.Module:
    return nn.Sequential(Float8Linear())


REGION = "0"


def step(model, i):
    sync(model)
    with torch.no_grad():
        return model(torch.randn(2, 8))
