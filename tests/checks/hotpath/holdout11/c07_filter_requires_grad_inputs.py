"""Clean: the forward multiplies in only the inputs that require grad, selected with the builtin `filter(lambda x: x.requires_grad, inputs)`; on torch 2.13 Dynamo traces `filter` and the model compiles once with no break (the reported graph break is gone). From pytorch/pytorch#128944 (graph break due to unsupported builtin filter function)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/128944"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class GatedProduct(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        out = self.proj(inputs[0])
        for inp in filter(lambda x: x.requires_grad, inputs):
            out = out * inp
        return out + 2000


def build() -> nn.Module:
    return GatedProduct()


def step(model: nn.Module, i: int) -> None:
    inputs = [torch.randn(8), torch.randn(8).requires_grad_(True)]
    model(inputs).sum().backward()
