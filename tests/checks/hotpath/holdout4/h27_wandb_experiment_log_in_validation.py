"""Hazard: the compiled validation forward logs a metric through `self.logger.experiment.log(...)`, a wandb-like run object (another module) that turns the tensor into a Python float and appends a row, so each call graph-breaks. From Lightning-AI/pytorch-lightning#17214: Bug with `torch.compile` and `self.logger.experiment.log`."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/17214"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 4}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 4, "graph_breaks": 3}, "2.12": {"compiles_over_8_steps": 4, "graph_breaks": 3}}  # 2.12 measured on the CPU-only machine (2.12.1+cu130); 2.11 re-measured on the CPU-only machine, 2.11.0+cu130 (the earlier record: 4 compiles, 2 breaks)


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
        self.logger = _helpers_b.WandbLogger()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:  # validation_step
        logits = self.net(x)
        err = (logits.argmax(-1) != y).float().mean()
        self.logger.experiment.log({"val/err": err})
        return logits


def build() -> nn.Module:
    return Classifier().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8), torch.randint(0, 3, (4,)))
