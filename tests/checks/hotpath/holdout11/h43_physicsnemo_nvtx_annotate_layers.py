"""Hazard: PhysicsNeMo's DLWP-HEALPix layers decorate `HEALPixFoldFaces.forward` / `HEALPixUnfoldFaces.forward` with an nvtx `annotate` range (push/pop with host timestamps kept in a Python range stack), so the compiled U-Net breaks the graph at every annotated layer call. From NVIDIA/physicsnemo#872 (unit test for torch compile: dlwp_healpix_unet graph-breaks due to nvtx annotations)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import annotate

LABEL = "graph-break"
SOURCE = "https://github.com/NVIDIA/physicsnemo/pull/872"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 7, "graph_breaks": 4}, "2.12": {"compiles_over_8_steps": 7, "graph_breaks": 4}}  # 2.11: measured on the H100 machine; 2.12 measured on the CPU-only machine (2.12.1+cu130)


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
