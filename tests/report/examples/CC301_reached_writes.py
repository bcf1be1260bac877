"""CC301: counters the hot path reaches in less obvious ways, each changing on every call."""
from torch import nn


class Recorder:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, module, args, out):
        self.count += 1  # expect: CC301
        return out


class Base(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.batches = 0

    def forward(self, x):
        self.batches += 1  # expect: CC301
        return self.proj(x)


class Router(Base):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.flip = False
        self.expert_hits = [0, 0, 0, 0]
        self.by_name = {"a": 0}
        self.key = "a"
        self.nested_calls = 0
        self.proj.register_forward_hook(Recorder())

    def forward(self, x):
        self.calls = self.calls + 1  # expect: CC301
        self.flip ^= True  # expect: CC301
        for e in range(4):
            self.expert_hits[e] += 1  # expect: CC301
        self.by_name[self.key] = self.by_name[self.key] + 1  # expect: CC301

        def bump():
            self.nested_calls += 1  # expect: CC301

        bump()
        return super().forward(x)


def build() -> nn.Module:
    return Router()
