"""Hazard: a hand-rolled compiled optimizer step reads `self.param_groups[0]["lr"]`, a Python float the LR scheduler rewrites after every step, so the step recompiles on the lr guard as soon as the scheduler moves it, from pytorch/pytorch#120934 (batch step time slow to converge when adding an LR scheduler: last reason `param_groups[0]['lr'] == ...`)."""

from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/120934"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "optimizer"


class SGDStep(nn.Module):
    """An optimizer written as a module so that it can be compiled with the model (param_groups as in torch.optim)."""

    def __init__(self, params: list[nn.Parameter], lr: float) -> None:
        super().__init__()
        self.params = params
        self.param_groups = [{"lr": lr, "initial_lr": lr, "weight_decay": 0.0}]

    def forward(self) -> None:
        group = self.param_groups[0]
        for p in self.params:
            if p.grad is not None:
                p.add_(p.grad, alpha=-group["lr"])


class ExponentialLR:
    def __init__(self, optimizer: SGDStep, gamma: float) -> None:
        self.optimizer = optimizer
        self.gamma = gamma
        self.last_epoch = 0

    def step(self) -> None:
        self.last_epoch += 1
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * self.gamma**self.last_epoch


class Trainee(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.optimizer = SGDStep(list(self.fc.parameters()), lr=0.1)
        self.scheduler = ExponentialLR(self.optimizer, gamma=0.9)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def build() -> nn.Module:
    return Trainee()


def step(model: nn.Module, i: int) -> None:
    model.zero_grad()
    model(torch.randn(4, 8)).pow(2).mean().backward()
    with torch.no_grad():
        model.optimizer()
    model.scheduler.step()
