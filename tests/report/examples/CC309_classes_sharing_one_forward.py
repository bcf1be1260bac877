"""CC309: an augmentation pipeline compiled op by op whose ops are ten classes inheriting one `forward` from their
base class: Dynamo keeps one cache for that code object and guards the type of `self`, so each class is one more
compile, and past the recompile limit (8) the last ops run eager (measured on torch 2.13: eight compiles). Instances
of one class share one compiled forward; a class with a forward of its own is a code object of its own."""
import torch
from torch import nn

REGION = "augs.*"
LOCATION = "augs.1"


class Augmentation(nn.Module):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.k = k

    def forward(self, x):  # expect: CC309
        return self.apply_transform(x)

    def apply_transform(self, x):
        return x


def _op(i: int) -> type:
    return type(f"Op{i}", (Augmentation,), {"apply_transform": lambda self, x: x * self.k})


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.augs = nn.ModuleList(_op(i)(2.0) for i in range(10))

    def forward(self, x):
        for aug in self.augs:
            x = aug(x)
        return x


def build() -> nn.Module:
    return Pipeline()
