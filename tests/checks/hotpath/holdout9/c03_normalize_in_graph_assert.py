"""Clean: the same preprocessing stem as h06 after the fix in pytorch/vision#9314: the zero-std check is an in-graph async assert instead of a Python `if` on a tensor, so the forward compiles once with no break."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_a import normalize_image_checked_in_graph

LABEL = None
SOURCE = "https://github.com/pytorch/vision/pull/9314"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class NormalizedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mean = [0.485, 0.456, 0.406]
        self.std = [0.229, 0.224, 0.225]
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 4)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = normalize_image_checked_in_graph(images, mean=self.mean, std=self.std)
        x = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc(x)


def build() -> nn.Module:
    return NormalizedClassifier()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.rand(2, 3, 8, 8))
