"""Hazard: a DeepSpeed-engine style trainer runs its periodic evaluation with `engine.eval()` under `torch.no_grad()` on the same compiled module it trains, so the first evaluation fails the grad-mode guard and compiles a second entry. From huggingface/accelerate#2460 (Support deepspeed dynamo: "torch recompiles the model when grad mode is changed")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_c import DeepSpeedLikeEngine

LABEL = "grad-mode"
SOURCE = "https://github.com/huggingface/accelerate/pull/2460"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "module"


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


def build() -> nn.Module:
    model = Block()
    return DeepSpeedLikeEngine(model, torch.optim.SGD(model.parameters(), lr=0.01))


EVAL_EVERY = 3


def step(engine: nn.Module, i: int) -> None:
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    if (i + 1) % EVAL_EVERY == 0:
        engine.eval()
        with torch.no_grad():
            engine(torch.randn(4, 8))
        engine.train()
