"""CC304: timing inside a compiled forward, and a helper kept eager with torch.compiler.disable."""
import time

import torch
from torch import nn


@torch.compiler.disable
def log_shape(x):
    return x


class Timed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        t0 = time.perf_counter()  # expect: CC304
        log_shape(x)  # expect: CC304
        return self.proj(x) + 0 * t0


def build() -> nn.Module:
    return Timed()
