"""Hazard: the training augmentations (torchvision-style RandomHorizontalFlip / RandomVerticalFlip and a random brightness jitter) are an `nn.Sequential` inside the compiled model, and each transform decides with `if torch.rand(1) < self.p:`, a tensor in a Python `if` that breaks the graph on every call. From pytorch/pytorch#100112 (can't compile augmentations: `torch.compile(nn.Sequential(RandomResizedCrop, RandomHorizontalFlip, ...))`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/100112"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 4}


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        if torch.rand(1) < self.p:
            return img.flip(-1)
        return img


class RandomVerticalFlip(RandomHorizontalFlip):
    def forward(self, img: torch.Tensor) -> torch.Tensor:
        if torch.rand(1) < self.p:
            return img.flip(-2)
        return img


class RandomBrightness(nn.Module):
    def __init__(self, p: float = 0.8, strength: float = 0.4) -> None:
        super().__init__()
        self.p, self.strength = p, strength

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        if self.p < torch.rand(1):
            return img
        factor = 1 + (torch.rand(()) * 2 - 1) * self.strength
        return (img * factor).clamp(0, 1)


class AugmentedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.train_transforms = nn.Sequential(RandomHorizontalFlip(p=0.5), RandomVerticalFlip(p=0.5), RandomBrightness())
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 8))

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        if self.training:
            img = self.train_transforms(img)
        return self.backbone(img)


def build() -> nn.Module:
    return AugmentedClassifier()


def step(model: nn.Module, i: int) -> None:
    model(torch.rand(2, 3, 8, 8)).sum().backward()
