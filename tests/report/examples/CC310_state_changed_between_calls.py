"""CC310: the loop writes Python state that the compiled forward reads (a step counter, a flag, a schedule)."""
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)
        self.global_step = 0
        self.temperature = 1.0
        self.served = 0

    def forward(self, x):
        warm = 0.5 if self.global_step < 100 else 1.0
        return self.drop(self.proj(x)) * warm / self.temperature


def build() -> nn.Module:
    return Decoder()


def step(model, i):
    model.global_step = i  # expect: CC310 (an int changed on every call: an error)
    model.temperature = max(0.5, 1.0 - 0.01 * i)  # expect: CC310 warning (a float schedule settles)
    model.train(i % 2 == 0)  # expect: CC310 (Dropout reads `training`, toggled every call)
    model.served += 1  # never read by the compiled code: not reported
    with torch.no_grad():
        return model(torch.randn(2, 8))
