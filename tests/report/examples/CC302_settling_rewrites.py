"""CC302: a list that grows on the hot path and a rewrite from the value's own value that does not settle; rewrites
that settle (a high-water mark, a default kept, a conversion of itself) are not reported."""
import enum

from torch import nn


class Mode(enum.Enum):
    A = "a"
    B = "b"


class Rotary(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.max_seq_len_cached = 8
        self.act = "gelu"
        self.mode = Mode.A
        self.history = []
        self.scale = 1

    def forward(self, x):
        self.max_seq_len_cached = max(self.max_seq_len_cached, x.shape[1])  # settles: not reported
        self.act = self.act or "relu"  # settles: not reported
        self.mode = Mode(self.mode)  # settles: not reported
        self.history.append(x.shape[0])  # expect: CC302
        self.scale = self.scale * 2  # expect: CC302
        y = self.proj(x) * self.scale
        return nn.functional.gelu(y) if self.act == "gelu" else y.relu()


def build() -> nn.Module:
    return Rotary()
