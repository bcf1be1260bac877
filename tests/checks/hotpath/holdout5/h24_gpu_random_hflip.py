"""Hazard: a GPU augmentation module inside the compiled model decides with `if torch.rand(1) < self.p:` whether to flip, a tensor used as a Python condition, so Dynamo breaks the graph and compiles the resume code for both branches. From pytorch/vision#8056 (Removing graph breaks in transforms)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/vision/issues/8056"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 2}


class RandomHorizontalFlip(nn.Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        if torch.rand(1) < self.p:
            return img.flip(-1)
        return img


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
