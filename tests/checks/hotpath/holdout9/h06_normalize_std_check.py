"""Hazard: a model's preprocessing stem calls a torchvision-style `normalize_image` that validates `if (std == 0).any(): raise ValueError(...)`; the Python branch on a tensor is data-dependent, so the compiled forward graph-breaks there on every call. From pytorch/vision#9314 (avoid torch.compile graph-break in functional normalize)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_a import normalize_image

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/vision/pull/9314"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class NormalizedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mean = [0.485, 0.456, 0.406]
        self.std = [0.229, 0.224, 0.225]
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = normalize_image(images, mean=self.mean, std=self.std)
        x = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc(x)


def build() -> nn.Module:
    return NormalizedClassifier()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.rand(2, 3, 8, 8))
