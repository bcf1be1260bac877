"""Hazard: a kornia-style `distance_transform` (used by a boundary loss inside the compiled training module) grows the distance map for a fixed number of iterations but leaves the loop early with `if not mask.any(): break` once no pixel is left. From kornia/kornia#3794 (the `if not mask.any(): break` early-out in `contrib/distance_transform.py` is data-dependent control flow on a tensor value; the PR deletes it because the trailing iterations are exact no-ops, making the loop fullgraph)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/kornia/kornia/pull/3794"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 3, "graph_breaks": 2}}  # 2.11 re-measured on the CPU-only machine, 2.11.0+cu130 (the earlier record: 5 compiles, 3 breaks)


def distance_transform(image: torch.Tensor, kernel_size: int = 3, h: float = 0.35) -> torch.Tensor:
    n_iters = max(image.shape[-2:]) // (kernel_size // 2)
    grid = torch.stack(torch.meshgrid(torch.arange(kernel_size), torch.arange(kernel_size), indexing="ij")).float()
    dist = ((grid - kernel_size // 2) ** 2).sum(0).sqrt()
    kernel = torch.exp(-dist / h).view(1, 1, kernel_size, kernel_size)
    out = torch.zeros_like(image)
    boundary = image.clone()
    for i in range(n_iters):
        cdt = F.conv2d(boundary, kernel, padding=kernel_size // 2)
        cdt = -h * torch.log(cdt.clamp_min(1e-12))
        mask = (cdt > 0) & (out == 0) & (image == 0)
        if not mask.any():
            break
        offset = i * (kernel_size // 2)
        out = out + (offset + cdt) * mask
        boundary = torch.where(mask, torch.ones_like(boundary), boundary)
    return out


class BoundaryLossModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seg = nn.Conv2d(1, 1, 3, padding=1)

    def forward(self, image: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        prob = torch.sigmoid(self.seg(image))
        dist = distance_transform(target)
        return (prob * dist).mean()


def build() -> nn.Module:
    return BoundaryLossModel()


def step(model: nn.Module, i: int) -> None:
    image = torch.rand(2, 1, 8, 8)
    target = torch.zeros(2, 1, 8, 8)
    target[:, :, 2 + i % 3, 3] = 1.0
    model(image, target).backward()
