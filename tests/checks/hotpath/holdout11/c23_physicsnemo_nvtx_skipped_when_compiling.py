"""Clean: the same HEALPix fold/unfold layers with their profiling decorator, but the decorator skips the nvtx range push/pop while Dynamo traces (`torch.compiler.is_compiling()`), so the compiled U-Net block is one graph; ranges still show in eager profiling. Look-alike of h43, from NVIDIA/physicsnemo#872."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import annotate_if_not_compiling as annotate

LABEL = None
SOURCE = "https://github.com/NVIDIA/physicsnemo/pull/872"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class HEALPixFoldFaces(nn.Module):
    @annotate("HEALPixFoldFaces:forward")
    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        n, f, c, h, w = tensor.shape
        return torch.reshape(tensor, shape=(n * f, c, h, w))


class HEALPixUnfoldFaces(nn.Module):
    def __init__(self, num_faces: int = 12) -> None:
        super().__init__()
        self.num_faces = num_faces

    @annotate("HEALPixUnfoldFaces:forward")
    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        nf, c, h, w = tensor.shape
        return torch.reshape(tensor, shape=(-1, self.num_faces, c, h, w))


class HEALPixUNetBlock(nn.Module):
    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.fold = HEALPixFoldFaces()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = nn.GELU()
        self.unfold = HEALPixUnfoldFaces()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.unfold(self.act(self.conv(self.fold(x))))


def build() -> nn.Module:
    return HEALPixUNetBlock()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 12, 4, 4, 4))
