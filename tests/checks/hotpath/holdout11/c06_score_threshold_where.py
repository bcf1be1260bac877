"""Clean: the same score head with the overflow sentinel expressed as `torch.where` on the tensor instead of a Python `if`, so nothing is read back to Python and the forward compiles once with no break. Look-alike of pytorch/pytorch#97115 (`if x[0] >= -1e5` graph break)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/97115"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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

        scores = torch.where(scores[0] >= -1e5, scores.clamp(min=-1e4), scores)
        restore_floor()
        return scores.softmax(-1) + self.floor


def build() -> nn.Module:
    return ScoreHead()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
