"""Clean: a jagged-tensor-like object that dispatches through `__torch_function__` is passed to the compiled block fresh each batch and the block calls its `.sin()` method; torch 2.13 no longer guards the bound method on the object's identity, so new batch objects reuse the single compiled entry. Look-alike of pytorch/pytorch#128964 (methods on torch_function objects require id_match guards, causing recompiles), which no longer reproduces here."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import NJTLike

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/128964"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class JaggedBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, njt: NJTLike) -> torch.Tensor:
        out = njt.sin()
        return out._values * self.scale


def build() -> nn.Module:
    return JaggedBlock()


def step(model: nn.Module, i: int) -> None:
    batch = NJTLike(torch.randn(10, 3, 4), torch.tensor([0, 3, 10]))
    model(batch).sum().backward()
