"""Hazard: images arrive as a torchvision-style `TVTensor` subclass whose `__torch_function__` is wrapped in `torch._dynamo.disable` (the workaround for a recursion error), so the first torch op the compiled preprocessing + stem applies to the image graph-breaks there and the stem is split into two graphs (the override returns plain tensors, so later ops trace). From pytorch/vision#8110 (support for tv tensors in torch compile for functional ops: until `disable` is removed there are graph breaks after all calls)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import TVTensorLike

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/vision/pull/8110"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class Stem(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mean", torch.full((8,), 0.5))
        self.register_buffer("std", torch.full((8,), 0.25))
        self.fc = nn.Linear(8, 8)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        image = image.flip(-1)  # horizontal flip (functional kernel)
        image = (image - self.mean) / self.std  # normalize
        return self.fc(image)


def build() -> nn.Module:
    return Stem()


def step(model: nn.Module, i: int) -> None:
    image = TVTensorLike._wrap(torch.rand(2, 8))
    model(image).sum().backward()
