"""Clean: the same segmentation trainer over a MONAI MetaTensor / plain-tensor ConcatDataset, but the batch is converted with `MetaTensor.as_tensor()` before it reaches the compiled network (the fix asked for in the review), so the network always sees plain tensors and compiles once. Look-alike of h23, from ProjectNeura/MIPCandy#189."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import MetaTensor

LABEL = None
SOURCE = "https://github.com/ProjectNeura/MIPCandy/pull/189"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TinyUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Conv2d(1, 4, 3, padding=1)
        self.dec = nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.dec(torch.relu(self.enc(images)))


def build() -> nn.Module:
    return TinyUNet()


def load_batch(i: int) -> tuple[torch.Tensor, torch.Tensor]:
    image, label = torch.randn(2, 1, 8, 8), torch.randint(0, 2, (2, 8, 8))
    if i % 2 == 0:
        meta = {"filename_or_obj": f"case_{i:03d}.nii.gz", "spatial_shape": (8, 8)}
        return MetaTensor(image, meta=meta), MetaTensor(label, meta=meta)
    return image, label


def step(model: nn.Module, i: int) -> None:
    images, labels = load_batch(i)
    if isinstance(images, MetaTensor):
        images, labels = images.as_tensor(), labels.as_tensor()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
