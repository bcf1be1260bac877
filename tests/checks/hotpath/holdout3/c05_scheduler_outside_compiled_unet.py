"""Clean: the diffusers arrangement that report relies on — only the denoiser is compiled; the scheduler, with `set_begin_index(0)` so it never calls `nonzero().item()`, keeps its `_step_index` counter outside, and the denoiser only receives the timestep as a tensor, so it compiles once. From huggingface/diffusers#11696."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_a

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/11696"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.time_proj = nn.Linear(1, 8)
        self.net = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.Linear(16, 8))

    def forward(self, latents: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        return self.net(latents + self.time_proj(timestep.view(-1, 1) / 1000))


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.transformer = Transformer()
        self.scheduler = _helpers_a.EulerDiscreteScheduler()
        self.latents = torch.randn(1, 8)


REGION = "transformer"


def build() -> nn.Module:
    pipe = Pipeline()
    pipe.scheduler.set_timesteps(8)
    pipe.scheduler.set_begin_index(0)
    return pipe


def step(model: nn.Module, i: int) -> None:
    scheduler = model.scheduler
    t = scheduler.timesteps[i]
    with torch.no_grad():
        noise_pred = model.transformer(model.latents, t)
    # scheduler.step(): eager Python bookkeeping between compiled calls
    if scheduler.step_index is None:
        scheduler._init_step_index(t)
    sigma, sigma_next = scheduler.sigmas[scheduler.step_index], scheduler.sigmas[scheduler.step_index + 1]
    model.latents = model.latents + (sigma_next - sigma) * noise_pred
    scheduler._step_index += 1
