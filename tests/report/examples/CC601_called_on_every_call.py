"""CC601 as an error: custom ops without a fake implementation that every compiled call reaches (after a check that
raises, in a loop over a known non-empty range, in a helper the forward calls): the first compiled call fails, with
or without a step. Checked by tests/checks/custom_ops/test_custom_ops.py."""
import torch
from torch import nn


@torch.library.custom_op("cc601_every::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@torch.library.custom_op("cc601_every::refine", mutates_args=())
def refine(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@torch.library.custom_op("cc601_every::norm", mutates_args=())
def norm(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm()


def normalize(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.cc601_every.norm(x)  # expect: CC601


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.kernel = refine
        self.iters = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2:
            raise ValueError("expected (batch, 8)")  # a call that raises fails anyway: what follows runs on the others
        h = torch.ops.cc601_every.scale(self.proj(x))  # expect: CC601
        for _ in range(self.iters):
            h = self.kernel(h)  # expect: CC601
        return normalize(h)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(2))


def build() -> Model:
    return Model().eval()
