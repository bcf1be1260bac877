"""Hazard: the compiled denoising step calls the scheduler, which on its first step looks up its position with `(self.timesteps == timestep).nonzero()` and `.item()` and then counts `_step_index += 1` in a Python int; the `.item()` breaks the graph and the counter changes on every call. From huggingface/diffusers#11696 (Avoid DtoH sync from access of nonzero() item in scheduler)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = "item-branch"
SOURCE = "https://github.com/huggingface/diffusers/pull/11696"
OBSERVED = {"compiles_over_8_steps": 12, "graph_breaks": 4}


class DenoiseStep(nn.Module):
    """Model call + Euler update in one module, compiled as a unit."""

    def __init__(self) -> None:
        super().__init__()
        self.transformer = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 8))
        self.scheduler = _helpers_a.EulerDiscreteScheduler()

    def forward(self, latents: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        noise_pred = self.transformer(latents)
        scheduler = self.scheduler
        if scheduler.step_index is None:
            scheduler._init_step_index(t)
        sigma = scheduler.sigmas[scheduler.step_index]
        sigma_next = scheduler.sigmas[scheduler.step_index + 1]
        prev_sample = latents + (sigma_next - sigma) * noise_pred
        scheduler._step_index += 1
        return prev_sample


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.denoise = DenoiseStep()
        self.latents = torch.randn(1, 8)


REGION = "denoise"


def build() -> nn.Module:
    pipe = Pipeline()
    pipe.denoise.scheduler.set_timesteps(8)
    return pipe


def step(model: nn.Module, i: int) -> None:
    t = model.denoise.scheduler.timesteps[i]
    with torch.no_grad():
        model.latents = model.denoise(model.latents, t)
