"""Clean: the same denoiser picks its sigma with a tensor comparison and a weighted sum, no `.item()` (the begin index is set before the loop). From huggingface/diffusers#14176."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/14176"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Denoise(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.register_buffer("timesteps", torch.arange(16, 0, -1).float())
        self.register_buffer("sigmas", torch.linspace(1.0, 0.0, 17)[:16])

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        onehot = (self.timesteps == timestep).to(sample.dtype)
        sigma = (onehot * self.sigmas).sum()
        return sample + sigma * self.net(sample)


def build() -> nn.Module:
    return Denoise()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.tensor(float(16 - i)))
