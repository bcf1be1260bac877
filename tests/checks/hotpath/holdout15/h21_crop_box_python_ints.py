"""Hazard: a kornia-style RandomResizedCrop in "slice" mode samples its crop box with the torch RNG inside the compiled augmentation pipeline, then turns the box into Python ints (`.tolist()`) to slice the image before resizing. From kornia/kornia#4658 ("RandomResizedCrop recompiles per sampled crop box": the sampled crop coordinates become Python values, so Dynamo recompiles until the cache limit is reached and the compiled augmentation ends up slower than eager)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import AugmentationBase2D

LABEL = "item-branch"
SOURCE = "https://github.com/kornia/kornia/issues/4658"
OBSERVED = {"compiles_over_8_steps": 9, "graph_breaks": 4}


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
        return {"src": torch.cat([x0, y0, x0 + cw, y0 + ch]).long()}

    def apply_transform(self, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return crop_by_indices(x, params["src"], self.size)


def crop_by_indices(x: torch.Tensor, src: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    x1, y1, x2, y2 = src.tolist()
    patch = x[..., y1:y2, x1:x2]
    return F.interpolate(patch, size=size, mode="bilinear", align_corners=True)


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
