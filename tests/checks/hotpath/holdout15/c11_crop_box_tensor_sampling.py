"""Clean: the same kornia-style RandomResizedCrop, but the sampled crop box stays a tensor: the crop and resize are one `affine_grid`/`grid_sample` built from the box, so no coordinate ever becomes a Python value. From kornia/kornia#4658 (the fix, kornia#4659, "keeps those draws in tensors")."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import AugmentationBase2D

LABEL = None
SOURCE = "https://github.com/kornia/kornia/issues/4658"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RandomResizedCrop(AugmentationBase2D):
    def __init__(self, size: tuple[int, int], scale: tuple[float, float] = (0.3, 1.0)) -> None:
        super().__init__(p=1.0)
        self.size = size
        self.scale = scale

    def generate_parameters(self, shape: torch.Size) -> dict[str, torch.Tensor]:
        _, _, h, w = shape
        area = torch.empty(1).uniform_(*self.scale)
        ch = (area.sqrt() * h).clamp(2, h).floor()
        cw = (area.sqrt() * w).clamp(2, w).floor()
        y0 = (torch.rand(1) * (h - ch + 1)).floor()
        x0 = (torch.rand(1) * (w - cw + 1)).floor()
        return {"src": torch.cat([x0, y0, x0 + cw, y0 + ch])}

    def apply_transform(self, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return crop_by_grid(x, params["src"], self.size)


def crop_by_grid(x: torch.Tensor, src: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    b, c, h, w = x.shape
    x1, y1, x2, y2 = src.unbind()
    # box corners in normalised [-1, 1] coordinates (align_corners=True)
    sx = (x2 - 1 - x1) / (w - 1)
    sy = (y2 - 1 - y1) / (h - 1)
    tx = (x1 + x2 - 1) / (w - 1) - 1
    ty = (y1 + y2 - 1) / (h - 1) - 1
    zero = torch.zeros_like(sx)
    theta = torch.stack([torch.stack([sx, zero, tx]), torch.stack([zero, sy, ty])]).expand(b, 2, 3)
    grid = F.affine_grid(theta, [b, c, size[0], size[1]], align_corners=True)
    return F.grid_sample(x, grid, mode="bilinear", align_corners=True)


class AugmentationPipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.crop = RandomResizedCrop((8, 8))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.crop(images)


def build() -> nn.Module:
    return AugmentationPipeline()


def step(model: nn.Module, i: int) -> None:
    images = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        model(images)
