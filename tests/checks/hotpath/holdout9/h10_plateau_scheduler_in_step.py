"""Hazard: a compiled training-step module runs `opt.step()` and `scheduler.step(metric)` with a tensor learning rate, but `ReduceLROnPlateau._reduce_lr` writes a plain Python float back into `param_group["lr"]` when the metric plateaus. On torch 2.13 the optimizer/scheduler step graph-breaks in the optimizer wrappers on every call, and the plateau's float write sends a further frame through compilation. From pytorch/pytorch#163093 (`ReduceLROnPlateau._reduce_lr` triggers recompilation with tensor lr)."""
from __future__ import annotations

import torch
from torch import nn, optim

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/163093"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


class CompiledOptimizerStep(nn.Module):
    """The tutorial's `@torch.compile def fn(metric): opt.step(); scheduler.step(metric)` held as a module."""

    def __init__(self) -> None:
        super().__init__()
        self.model = nn.Linear(8, 1)
        self.opt = optim.Adam(self.model.parameters(), lr=torch.tensor(0.1))
        self.scheduler = optim.lr_scheduler.ReduceLROnPlateau(self.opt, factor=0.5, patience=1, min_lr=0.001)

    def forward(self, metric: torch.Tensor) -> None:
        self.opt.step()
        self.scheduler.step(metric)


def build() -> nn.Module:
    return CompiledOptimizerStep()


FAKE_METRICS = torch.linspace(1.0, 0.0, 8)
FAKE_METRICS[3:6] = FAKE_METRICS[3]  # the validation loss plateaus for three epochs


def step(model: nn.Module, i: int) -> None:
    loss = model.model(torch.randn(4, 8)).pow(2).mean()
    model.opt.zero_grad()
    loss.backward()
    model(FAKE_METRICS[i])
