"""Clean: the same kornia-style batch-probability gate after the fix: under `torch.compiler.is_compiling()` it takes the branchless `batch_prob * elem_prob` path, so the compiled augmentation + model trace once with no graph break. From kornia/kornia#3793 (the fix itself)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import _BasicAugmentationBase

LABEL = None
SOURCE = "https://github.com/kornia/kornia/pull/3793"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class RandomBrightness(_BasicAugmentationBase):
    def __init__(self, brightness: float = 0.2, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.brightness = brightness

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        to_apply = self.__batch_prob_generator_compile_safe__(x.shape, self.p, self.p_batch, self.same_on_batch)
        factor = (torch.rand(x.shape[0]) * 2 - 1) * self.brightness
        factor = torch.where(to_apply, factor, torch.zeros_like(factor))
        return (x + factor.view(-1, 1)).clamp(0, 1)


class AugmentedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.augment = RandomBrightness(0.2, p=0.5)
        self.head = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.augment(x))


def build() -> nn.Module:
    return AugmentedClassifier()


def step(model: nn.Module, i: int) -> None:
    model(torch.rand(4, 8)).sum().backward()
