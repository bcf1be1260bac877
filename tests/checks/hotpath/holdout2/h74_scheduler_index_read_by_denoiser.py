"""Hazard: the pipeline loop steps the scheduler outside the compiled transformer, but the transformer reads the scheduler's Python step_index to scale its input. From huggingface/diffusers#4347 (step_index as a Python counter)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout2 import _helpers_d

LABEL = "outside"
SOURCE = "https://github.com/huggingface/diffusers/pull/4347"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class Transformer(nn.Module):
    def __init__(self, scheduler) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.scheduler = scheduler

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        idx = self.scheduler.step_index or 0
        return self.proj(latents) * self.scheduler.sigmas[idx]


def build() -> nn.Module:
    model = Transformer(_helpers_d.EulerScheduler())
    model.latents = torch.randn(4, 8)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        noise_pred = model(model.latents)
        model.latents = model.scheduler.step(noise_pred, model.latents)
