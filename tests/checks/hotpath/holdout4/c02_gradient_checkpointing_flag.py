"""Clean: the model wraps its middle layer in `torch.utils.checkpoint` behind a constant `self.checkpoint` flag and trains under compile; with nothing untraceable inside the checkpointed call it compiles once, the setup of pytorch/pytorch#97436 (torch.compile not working with gradient checkpointing), which works now."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/97436"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class MyModel(nn.Module):
    def __init__(self, grad_checkpoint: bool) -> None:
        super().__init__()
        self.conv1 = nn.Linear(8, 16)
        self.conv2 = nn.Linear(16, 16)
        self.conv3 = nn.Linear(16, 8)
        self.checkpoint = grad_checkpoint

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.relu(self.conv1(x))
        if self.checkpoint:
            x = checkpoint(self.conv2, x, use_reentrant=False)
        else:
            x = self.conv2(x)
        x = torch.nn.functional.relu(x)
        return self.conv3(x)


def build() -> nn.Module:
    return MyModel(grad_checkpoint=True)


def step(model: nn.Module, i: int) -> None:
    model.zero_grad()
    model(torch.randn(2, 8)).pow(2).mean().backward()
