"""Clean: the GPU augmentation draws its per-sample flip decision as a tensor and applies it with torch.where, so the random choice never becomes a Python condition and the augmented classifier compiles once. From pytorch/vision#8056 (Removing graph breaks in transforms)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/vision/issues/8056"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        flip = torch.rand(img.shape[0], 1, 1, device=img.device) < self.p
        return torch.where(flip, img.flip(-1), img)


class AugmentedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.augment = RandomHorizontalFlip(p=0.5)
        self.head = nn.Linear(8, 8)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if self.training:
            images = self.augment(images)
        return self.head(images.mean(dim=1))


def build() -> nn.Module:
    return AugmentedClassifier()


def step(model: nn.Module, i: int) -> None:
    model.train()
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
