"""Hazard: a segmentation trainer concatenates a MONAI-loaded dataset, whose transforms return `MetaTensor` batches (a torch.Tensor subclass carrying `meta` and `affine`), with a dataset of pre-extracted plain tensors, and hands each batch to the compiled network as is; Dynamo guards on the input's tensor type and recompiles when it flips. From ProjectNeura/MIPCandy#189 (review: MONAI transforms cause recompile; fix with torch.as_tensor before the model)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout8._helpers_b import MetaTensor

LABEL = "tensor-subclass"
SOURCE = "https://github.com/ProjectNeura/MIPCandy/pull/189"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


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
    if i % 2 == 0:  # LoadImaged/EnsureChannelFirstd/RandFlipd output from the MONAI half of the ConcatDataset
        meta = {"filename_or_obj": f"case_{i:03d}.nii.gz", "spatial_shape": (8, 8)}
        return MetaTensor(image, meta=meta), MetaTensor(label, meta=meta)
    return image, label  # pre-extracted patches stored as plain tensors


def step(model: nn.Module, i: int) -> None:
    images, labels = load_batch(i)
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
