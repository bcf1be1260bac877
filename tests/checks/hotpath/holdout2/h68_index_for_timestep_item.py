"""Hazard: forward finds the scheduler index of the current timestep with `.nonzero()[0].item()` (a device-to-host sync and a graph break). From huggingface/diffusers#14176: set scheduler begin index in SD3 T2I."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/diffusers/pull/14176"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 3}


class Denoise(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.register_buffer("timesteps", torch.arange(16, 0, -1).float())
        self.register_buffer("sigmas", torch.linspace(1.0, 0.0, 17))

    def index_for_timestep(self, timestep: torch.Tensor) -> int:
        indices = (self.timesteps == timestep).nonzero()
        pos = 1 if len(indices) > 1 else 0
        return indices[pos].item()

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        step_index = self.index_for_timestep(timestep)
        return sample + self.sigmas[step_index] * self.net(sample)


def build() -> nn.Module:
    return Denoise()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.tensor(float(16 - i)))
