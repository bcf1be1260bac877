"""Hazard: a kornia-style augmentation pipeline of ten ops, each its own class inheriting the one base-class `forward`, is compiled op by op (REGION "augs.*"); every op lands in the same Dynamo cache entry keyed on a type guard, so after the recompile limit (8) the remaining ops silently run eager. From kornia/kornia#4659 ("Compiling multiple augmentation classes exhausts Dynamo's shared inherited `forward` cache"; the issue it fixes logged `___check_type_id(self, ...)` failures for one class after another, and `recompile_limit` defaults to 8)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_b import AugmentationBase2D

LABEL = "per-instance"
SOURCE = "https://github.com/kornia/kornia/pull/4659"
REGION = "augs.*"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class RandomBrightness(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return (x + 0.2 * (params["factor"] - 0.5)).clamp(0, 1)


class RandomContrast(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        mean = x.mean(dim=(-3, -2, -1), keepdim=True)
        return ((x - mean) * (0.8 + 0.4 * params["factor"]) + mean).clamp(0, 1)


class RandomGamma(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return x.clamp_min(1e-6) ** (0.8 + 0.4 * params["factor"])


class RandomInvert(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return 1.0 - x


class RandomSolarize(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return torch.where(x < 0.5 + 0.1 * params["factor"], x, 1.0 - x)


class RandomPosterize(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return torch.floor(x * 8) / 8


class RandomGrayscale(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return x.mean(dim=-3, keepdim=True).expand_as(x)


class RandomChannelShuffle(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return x.flip(-3)


class RandomHorizontalFlip(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return x.flip(-1)


class RandomVerticalFlip(AugmentationBase2D):
    def apply_transform(self, x, params):  # type: ignore[no-untyped-def]
        return x.flip(-2)


class AugmentationSequential(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        ops = [RandomBrightness, RandomContrast, RandomGamma, RandomInvert, RandomSolarize, RandomPosterize,
               RandomGrayscale, RandomChannelShuffle, RandomHorizontalFlip, RandomVerticalFlip]
        self.augs = nn.ModuleList(op(p=0.5) for op in ops)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for aug in self.augs:
            x = aug(x)
        return x


def build() -> nn.Module:
    return AugmentationSequential()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.rand(2, 3, 8, 8))
