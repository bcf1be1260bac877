"""Hazard: forward picks a task head with getattr(self, f"head_{self.task}") and the loop rotates the task (multi-task sampling). From Baijiong-Lin/LoRA-Torch#4: Torch .compile() vs. implementation (`getattr(self, f'...')` under compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "dynamic-getattr"
SOURCE = "https://github.com/Baijiong-Lin/LoRA-Torch/issues/4"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class MultiTask(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(8, 8)
        self.head_cls = nn.Linear(8, 3)
        self.head_reg = nn.Linear(8, 3)
        self.head_seg = nn.Linear(8, 3)
        self.task = "cls"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        head = getattr(self, f"head_{self.task}")
        return head(torch.relu(self.trunk(x)))


def build() -> nn.Module:
    return MultiTask()


def step(model: nn.Module, i: int) -> None:
    model.task = ("cls", "reg", "seg")[i % 3]
    with torch.no_grad():
        model(torch.randn(4, 8))
