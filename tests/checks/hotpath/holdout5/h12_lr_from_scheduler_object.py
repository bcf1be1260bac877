"""Hazard: forward scales its learned perturbation by the current learning rate read from a scheduler object held on the model (`scheduler.get_last_lr()[0]`), and the training loop steps the scheduler after every optimizer step, so the compiled forward guards on the float list. From pytorch/pytorch#130467 (compiled optimizer.step with an LR scheduler still recompiles on the second iteration)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout5 import _helpers_a

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/issues/130467"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class PerturbedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 8)
        self.scheduler = _helpers_a.LambdaSchedule(base_lr=0.1, gamma=0.9)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lr = self.scheduler.get_last_lr()[0]
        noise_scale = lr / self.scheduler.base_lr  # SAM-style perturbation shrinks with the LR
        return self.net(x + noise_scale * torch.randn_like(x))


def build() -> nn.Module:
    return PerturbedNet()


def step(model: nn.Module, i: int) -> None:
    optimizer = torch.optim.SGD(model.net.parameters(), lr=model.scheduler.get_last_lr()[0])
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    optimizer.step()
    model.zero_grad(set_to_none=True)
    model.scheduler.step()
