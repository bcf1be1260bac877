"""CC302: rewrites from the value's own value that may settle, and a list that grows on the hot path."""
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

    def forward(self, x):
        self.max_seq_len_cached = max(self.max_seq_len_cached, x.shape[1])  # expect: CC302
        self.act = self.act or "relu"  # expect: CC302
        self.mode = Mode(self.mode)  # expect: CC302
        self.history.append(x.shape[0])  # expect: CC302
        y = self.proj(x)
        return nn.functional.gelu(y) if self.act == "gelu" else y.relu()


def build() -> nn.Module:
    return Rotary()
