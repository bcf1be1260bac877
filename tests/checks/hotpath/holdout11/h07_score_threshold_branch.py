"""Hazard: the forward keeps a closure that writes a backup value into a buffer and then branches in Python on a tensor element (`if x[0] >= -1e5:`); the data-dependent condition breaks the graph and the code after it is compiled as a separate resume frame. From pytorch/pytorch#97115 (`if x[0] >= -1e5` graph break splitting a function with a closure)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "item-branch"
SOURCE = "https://github.com/pytorch/pytorch/issues/97115"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 1}


class ScoreHead(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.register_buffer("floor", torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.score(x).squeeze(-1)
        backup = -1.0

        def restore_floor() -> None:
            self.floor[0] = backup

        if scores[0] >= -1e5:  # overflow sentinel check on the first score
            scores = scores.clamp(min=-1e4)
        restore_floor()
        return scores.softmax(-1) + self.floor


def build() -> nn.Module:
    return ScoreHead()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
