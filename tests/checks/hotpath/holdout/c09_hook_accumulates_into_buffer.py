"""Clean: a forward hook registered before compiling accumulates activation statistics into a tensor buffer in place (add_), no Python counters. Look-alike of pytorch/pytorch#173452: Support forward hooks with torch.compile fullgraph=True for capturing intermediate activations."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/173452"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)
        self.register_buffer("act_sum", torch.zeros(8))
        self.register_buffer("act_count", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    model = Model()

    def accumulate(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        model.act_sum.add_(output.detach().sum(dim=0))
        model.act_count.add_(output.shape[0])

    model.fc1.register_forward_hook(accumulate)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
