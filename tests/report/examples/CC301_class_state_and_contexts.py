"""CC301: a classmethod called through its class writes the class's state (`cls` is the class, not the first
argument); state a context sets for one call and puts back (a nesting depth that enter and exit add up to
nothing, a flag last reset to the value it holds) is the same at every call's entry: not reported."""
from contextlib import contextmanager

import torch
from torch import nn


class QuantState:
    ENABLED = False
    DEPTH = 0
    CALLS = 0

    @classmethod
    def enter(cls, enabled: bool) -> None:
        cls.ENABLED = enabled  # reset by exit: not reported
        cls.DEPTH += 1  # put back by exit: not reported
        cls.CALLS += 1  # expect: CC301

    @classmethod
    def exit(cls) -> None:
        cls.DEPTH -= 1
        if cls.DEPTH == 0:
            cls.ENABLED = False


@contextmanager
def quantized(enabled: bool = True):
    QuantState.enter(enabled)
    try:
        yield
    finally:
        QuantState.exit()


class QLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if QuantState.ENABLED and QuantState.DEPTH > 0 and QuantState.CALLS >= 0:
            x = x.round()
        return super().forward(x)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = QLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with quantized(enabled=True):
            return self.fc(x)


def build() -> nn.Module:
    return Block()
