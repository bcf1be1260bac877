"""Hazard: a kornia-style GPU augmentation compiled as a module samples its parameters inside forward and turns them into Python numbers (`torch.rand(1).item()` for the apply-probability gate, `.item()` for the pixel shift), so the compiled augmentation graph-breaks on every call and the resumed frames recompile on the sampled values. From kornia/kornia#3913 (torch.compile of RandomPerspective: Dynamo cannot guard on runtime-sampled parameters)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/kornia/kornia/issues/3913"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 2}


class RandomPerspective(nn.Module):
    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5) -> None:
        super().__init__()
        self.distortion_scale = distortion_scale
        self.p = p

    def forward_parameters(self, shape: torch.Size) -> dict[str, torch.Tensor]:
        B, _, H, W = shape
        factor = torch.tensor([self.distortion_scale * W / 2, self.distortion_scale * H / 2])
        start = torch.tensor([[[0.0, 0.0], [W - 1.0, 0.0], [W - 1.0, H - 1.0], [0.0, H - 1.0]]]).expand(B, 4, 2)
        sign = torch.tensor([[[1, 1], [-1, 1], [-1, -1], [1, -1]]])
        end = start + factor * torch.rand(B, 4, 2) * sign
        return {"start_points": start, "end_points": end}

    def apply_transform(self, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
        # stand-in for warp_perspective: shift by the largest corner displacement
        shift = int((params["end_points"] - params["start_points"]).abs().max().item())
        return torch.roll(x, shifts=shift, dims=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.rand(1).item() > self.p:
            return x
        return self.apply_transform(x, self.forward_parameters(x.shape))


class AugmentedClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.augment = RandomPerspective()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(self.augment(x) if self.training else x)


REGION = "augment"


def build() -> nn.Module:
    return AugmentedClassifier()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 3, 8, 8)).sum().backward()
