"""Hazard: a float8 delayed-scaling linear clears its Python `amax_and_scale_synced` flag in forward while the training loop's `sync_float8_amax_and_scale_history` sets it back every step, so the compiled linear is re-traced for the flipped flag. From meta-pytorch/float8_experimental#211 (the module flag mutation caused graph breaks / recompiles; moved under enable_amax_init)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout3 import _helpers_b

LABEL = "assigned"
SOURCE = "https://github.com/meta-pytorch/float8_experimental/pull/211"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "proj"


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = _helpers_b.DelayedScalingLinear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.proj(x)))


def build() -> nn.Module:
    return MLP()


def step(model: nn.Module, i: int) -> None:
    opt = getattr(model, "_opt", None) or torch.optim.SGD(model.parameters(), lr=0.01)
    model._opt = opt
    loss = model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    _helpers_b.sync_float8_amax_and_scale_history(model)
