"""CC601 as a warning: custom ops without a fake implementation behind something the scan cannot decide (a test on an
argument, an early return, a loop over an argument's range, the right side of `and`, a flag that is off now): that
path may never run compiled. Checked by tests/checks/custom_ops/test_custom_ops.py."""
import torch
from torch import nn


def _op(name: str):
    @torch.library.custom_op(f"cc601_maybe::{name}", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    return op


masked, short, repeat, gated, stats = (_op(n) for n in ("masked", "short", "repeat", "gated", "stats"))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.log_stats = False

    def forward(self, x: torch.Tensor, mask=None, steps: int = 1, fuse=None) -> torch.Tensor:
        h = self.proj(x)
        if mask is not None:
            h = torch.ops.cc601_maybe.masked(h)  # expect: CC601 warning
        for _ in range(steps):
            h = torch.ops.cc601_maybe.repeat(h)  # expect: CC601 warning
        h = fuse and torch.ops.cc601_maybe.gated(h) or h  # expect: CC601 warning
        if self.log_stats:  # off now and nothing turns it on
            h = torch.ops.cc601_maybe.stats(h)  # expect: CC601 warning
        if h.shape[0] == 1:
            return h
        return torch.ops.cc601_maybe.short(h)  # expect: CC601 warning


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(2))


def build() -> Model:
    return Model().eval()
