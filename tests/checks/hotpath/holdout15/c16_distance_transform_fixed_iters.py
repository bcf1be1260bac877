"""Clean: the same kornia-style `distance_transform` inside the compiled boundary-loss module, with the early-out deleted: the loop always runs its fixed `n_iters` iterations, and once no pixel remains the trailing iterations add `0 * mask` and leave `boundary` unchanged. From kornia/kornia#3794 (delete the `if not mask.any(): break` early-out; the loop bound is already fixed, so removing the break changes nothing numerically but makes the loop fullgraph)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

LABEL = None
SOURCE = "https://github.com/kornia/kornia/pull/3794"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
