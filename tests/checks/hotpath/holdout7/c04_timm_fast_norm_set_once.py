"""Clean: a timm ConvNeXt-style block whose LayerNorm consults timm's module-level fast-norm switch
(`is_fast_norm()`) and, when on, casts to the autocast dtype and runs the norm with autocast disabled. The switch is
set once with `set_fast_norm()` before the model is built and never flipped afterwards, and on torch 2.13 the autocast
queries trace, so the block compiles once with no break (pytorch/pytorch#97084 reported 48 graph breaks for this path
on torch 2.0)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7 import _helpers_a as fast_norm

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/97084"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LayerNorm2d(nn.LayerNorm):
    def __init__(self, num_channels: int, eps: float = 1e-6) -> None:
        super().__init__(num_channels, eps=eps)
        self.fast_norm = fast_norm.is_fast_norm()  # read once at construction, as timm does

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        if self.fast_norm:
            x = fast_norm.fast_layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        else:
            x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.conv_dw = nn.Conv2d(dim, dim, kernel_size=3, padding=1, groups=dim)
        self.norm = LayerNorm2d(dim)
        self.mlp = nn.Sequential(nn.Conv2d(dim, 2 * dim, 1), nn.GELU(), nn.Conv2d(2 * dim, dim, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(self.conv_dw(x)))


def build() -> nn.Module:
    fast_norm.set_fast_norm(enable=True)
    try:
        return ConvNeXtBlock()
    finally:
        fast_norm.set_fast_norm(enable=False)  # leave the library default for other cases


def step(model: nn.Module, i: int) -> None:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model(torch.randn(1, 8, 4, 4)).float().mean().backward()
