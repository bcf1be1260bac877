"""CC304: a parameter the call passes as a constant decides a test until the function rebinds it, so a deprecation
shim that warns on `None` (`if group is None: warnings.warn(...); group = default()`) is a graph break on the call
that passes None, and dead code on the call that passes a group."""
import warnings

from torch import nn

_GROUP = "tp-group"


def group_or_default(group=None):
    if group is None:
        warnings.warn("pass the group explicitly", DeprecationWarning)  # expect: CC304
        group = _GROUP
    return group


class RowParallel(nn.Linear):
    def forward(self, x):
        group_or_default(None)
        return super().forward(x)


class ColumnParallel(nn.Linear):
    def forward(self, x):
        group_or_default(_GROUP)
        return super().forward(x)


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = ColumnParallel(8, 16)
        self.down = RowParallel(16, 8)

    def forward(self, x):
        return self.down(self.up(x))


def build() -> nn.Module:
    return MLP()
