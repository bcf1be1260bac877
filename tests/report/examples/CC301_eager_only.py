"""CC301 look-alikes that never run compiled: no finding (each compiles once under torch.compile)."""
import torch
from torch import nn
from torch.compiler import is_compiling as compiling


class Tracked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.track = True
        self.calls = 0
        self.steps = 0
        self.scripted = 0
        self.after = 0

    def forward(self, x):
        if not compiling():
            self.calls += 1
        if self.track and not torch.compiler.is_compiling():
            self.calls += 1
        eager = not torch._dynamo.is_compiling()
        if eager:
            self.steps += 1
        if torch.jit.is_scripting():
            self.scripted += 1
        y = self.proj(x)
        if torch.compiler.is_compiling():
            return y
        self.after += 1
        return y


def build() -> nn.Module:
    return Tracked()
