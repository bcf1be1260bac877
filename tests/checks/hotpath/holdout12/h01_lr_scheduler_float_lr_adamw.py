"""Hazard: the optimizer step and the LinearLR scheduler step are compiled together (the compiled-optimizer recipe) while the optimizer was built with a plain float `lr`; the scheduler rewrites `param_groups[0]["lr"]` as a new Python float every iteration, so the compiled AdamW step guards on the lr value and recompiles (the optimizer's own profiling wrappers also graph-break). From pytorch/tutorials#2874 (compiled optimizer + LR scheduler recipe: "No longer wrap the LR in a tensor here" shows the recompiles)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/tutorials/pull/2874"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}


class CompiledOptimizerStep(nn.Module):
    """The recipe's `@torch.compile def fn(): opt.step(); sched.step()`, held on a module."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
        self.optimizer = torch.optim.AdamW(self.net.parameters(), lr=5e-5, weight_decay=0.01)
        self.lr_scheduler = torch.optim.lr_scheduler.LinearLR(self.optimizer, start_factor=0.1, total_iters=100)

    def forward(self) -> None:
        self.optimizer.step()
        self.lr_scheduler.step()


def build() -> nn.Module:
    return CompiledOptimizerStep()


def step(model: nn.Module, i: int) -> None:
    x, y = torch.randn(4, 8), torch.randn(4, 8)
    loss = nn.functional.mse_loss(model.net(x), y)
    loss.backward()
    model()
    model.optimizer.zero_grad(set_to_none=True)
