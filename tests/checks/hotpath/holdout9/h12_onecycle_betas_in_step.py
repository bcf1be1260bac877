"""Hazard: a compiled optimizer step with a tensor learning rate still recompiles because `OneCycleLR` (with `cycle_momentum=True`) rewrites `param_group["betas"]` with new Python floats every step, and Dynamo guards on `param_groups[0]['betas'][0] == 0.9499993141552187`. From pytorch/pytorch#133898 (recompilation of AdamW w/ OneCycleLR)."""
from __future__ import annotations

import torch
from torch import nn, optim

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/133898"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 3}


class CompiledAdamWStep(nn.Module):
    def __init__(self, total_steps: int = 10000) -> None:
        super().__init__()
        self.model = nn.Linear(8, 8)
        lr = torch.tensor(0.001)
        self.optimizer = optim.AdamW(self.model.parameters(), lr=lr)
        self.scheduler = optim.lr_scheduler.OneCycleLR(self.optimizer, max_lr=lr, total_steps=total_steps)

    def forward(self) -> None:
        self.optimizer.step()
        self.scheduler.step()


def build() -> nn.Module:
    return CompiledAdamWStep()


def step(model: nn.Module, i: int) -> None:
    model.model(torch.randn(4, 8)).pow(2).mean().backward()
    model()
    model.optimizer.zero_grad()
