"""CC302: a dict on the module gains a key on every call; one refreshed under a constant key does not."""
import torch
from torch import nn


class Tracker(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.history = {}
        self.latest = {"amax": torch.zeros(())}

    def forward(self, x):
        y = self.proj(x)
        self.history[len(self.history)] = y.detach().amax()  # expect: CC302
        self.latest["amax"] = y.detach().amax()  # the same key every call: not reported
        return y


def build() -> nn.Module:
    return Tracker()
