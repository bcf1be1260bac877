"""Hazard: a compiled fused-SGD update reads the learning rate out of its param group, and an LR scheduler outside the compiled region rewrites `param_groups[0]["lr"]` with a new Python float after every step; the compiled update guards on the dict's float and is compiled again once the schedule moves. From pytorch/pytorch#107076 ("the lr in AdamW Optimizer is a float so causes a recompile everytime LRScheduler changes the lr"; suggested fix: a scalar-tensor lr)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import WarmupCosineScheduler

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/107076"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "optimizer"


class FusedSGD(nn.Module):
    """torch.optim-like: param_groups is a list of dicts, step() is the module's forward so it can be compiled."""

    def __init__(self, params: list[nn.Parameter], lr: float = 1e-2, momentum: float = 0.9) -> None:
        super().__init__()
        self.param_groups = [{"params": params, "lr": lr, "momentum": momentum}]
        for k, p in enumerate(params):
            self.register_buffer(f"momentum_buffer_{k}", torch.zeros_like(p))

    @torch.no_grad()
    def forward(self) -> None:
        group = self.param_groups[0]
        for k, p in enumerate(group["params"]):
            buf = getattr(self, f"momentum_buffer_{k}")
            buf.mul_(group["momentum"]).add_(p.grad)
            p.add_(buf, alpha=-group["lr"])


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 3))
        self.optimizer = FusedSGD(list(self.net.parameters()))
        self.scheduler = WarmupCosineScheduler(self.optimizer.param_groups)


def build() -> nn.Module:
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    y = torch.randint(0, 3, (4,))
    nn.functional.cross_entropy(model.net(x), y).backward()
    model.optimizer()
    model.scheduler.step()  # rewrites param_groups[0]["lr"] with a new float
    model.net.zero_grad(set_to_none=False)
