"""Hazard: a distillation student keeps a `TemperatureSchedule` object (another module) and calls it inside forward; the call advances the schedule's integer `num_steps`, so Dynamo guards on the helper's int attribute (`self.temperature_schedule.num_steps == k`) and recompiles on every call; on torch 2.13 the int is never made dynamic here. From pytorch/pytorch#154867 (recompilation on nn-module integer attributes, `self.c += 1`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout9._helpers_a import TemperatureSchedule

LABEL = "library-object"
SOURCE = "https://github.com/pytorch/pytorch/pull/154867"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class DistilledStudent(nn.Module):
    def __init__(self, dim: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)
        self.temperature_schedule = TemperatureSchedule(total_steps=8)

    def forward(self, x: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
        T = self.temperature_schedule()
        logits = self.head(torch.relu(self.body(x)))
        soft = torch.log_softmax(logits / T, dim=-1)
        target = torch.softmax(teacher_logits / T, dim=-1)
        return torch.nn.functional.kl_div(soft, target, reduction="batchmean") * T * T


def build() -> nn.Module:
    return DistilledStudent()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8), torch.randn(4, 4))
    loss.backward()
