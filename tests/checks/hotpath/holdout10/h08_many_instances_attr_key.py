"""Hazard: a multi-task model holds one small head per task, each an instance of the same class storing its task
`key` string, and every head is compiled on its own; all heads share one `forward` code object and Dynamo guards on
`self.key`, so each head adds a cache entry to the same code and the run recompiles per head (towards the recompile
limit with many tasks). From pytorch/pytorch#171593 (recompile_limit hit for many nn.Module instances with
module-attribute guards)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/pytorch/issues/171593"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "heads.*"

TASKS = ("ctr", "cvr", "dwell", "share")


class TaskHead(nn.Module):
    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.proj = nn.Linear(8, 1)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.proj(features[self.key])


class MultiTaskModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleList(TaskHead(k) for k in TASKS)

    def forward(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([head(features) for head in self.heads], dim=-1)


def build() -> nn.Module:
    return MultiTaskModel()


def step(model: nn.Module, i: int) -> None:
    features = {k: torch.randn(4, 8) for k in TASKS}
    model(features).sum().backward()
