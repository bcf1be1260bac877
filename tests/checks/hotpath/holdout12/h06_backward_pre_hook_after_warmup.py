"""Hazard: a gradient-scaling tracker registers `register_full_backward_pre_hook` on the model's Linear layers only after a few warm-up steps, i.e. after the forward was compiled; the compiled forward is not re-traced, so the hook is silently left out of the compiled graph and the gradients differ from eager. From pytorch/pytorch#117265 (torch.compile silently incorrect with full_backward_pre_hook)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import GradScaleTracker

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/117265"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
LATENT = "torch 2.13 neither recompiles nor breaks when the backward pre-hook appears after compilation: the compiled graph silently skips the hook (weight grads differ from eager), so the hazard is wrong gradients, not a count"


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(8, 8, bias=False)
        self.out = nn.Linear(8, 8)
        self.tracker = GradScaleTracker(warmup_steps=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.layer(x)))


def build() -> nn.Module:
    return Net()


def step(model: nn.Module, i: int) -> None:
    model.tracker.maybe_attach(model, i)
    x = torch.randn(3, 8, requires_grad=True)
    model(x).sum().backward()
