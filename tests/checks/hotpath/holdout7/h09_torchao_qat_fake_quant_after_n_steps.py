"""Hazard: a torchtune QAT recipe with `fake_quant_after_n_steps` prepares the model with torchao's 8da4w QAT
quantizer, disables fake quantization with `model.apply(disable_8da4w_fake_quant)` before training and re-enables it
with `model.apply(enable_8da4w_fake_quant)` at step N. The compiled feed-forward branches on each layer's
`_fake_quant_enabled` flag, so the flip fails the guard and recompiles mid-training. From pytorch/ao#198 (option to
disable fake quant for the first N steps of 8da4w QAT)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import (
    Int8DynActInt4WeightQATQuantizer,
    disable_8da4w_fake_quant,
    enable_8da4w_fake_quant,
)

LABEL = "outside"
SOURCE = "https://github.com/pytorch/ao/pull/198"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class FeedForward(nn.Module):
    def __init__(self, dim: int = 8, hidden_dim: int = 16) -> None:
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.nn.functional.silu(self.w1(x)) * self.w3(x))


class QATRecipe(nn.Module):
    """Holds the model the recipe trains; `_fake_quant_after_n_steps` comes from the recipe config."""

    def __init__(self, fake_quant_after_n_steps: int = 3) -> None:
        super().__init__()
        self.model = Int8DynActInt4WeightQATQuantizer(groupsize=4).prepare(FeedForward())
        self._fake_quant_after_n_steps = fake_quant_after_n_steps
        self._steps_run = 0
        if fake_quant_after_n_steps is not None:
            self.model.apply(disable_8da4w_fake_quant)


REGION = "model"


def build() -> nn.Module:
    recipe = QATRecipe()
    recipe.optimizer = torch.optim.AdamW(recipe.model.parameters(), lr=1e-3)
    return recipe


def step(recipe: nn.Module, i: int) -> None:
    if recipe._fake_quant_after_n_steps is not None and recipe._steps_run == recipe._fake_quant_after_n_steps:
        recipe.model.apply(enable_8da4w_fake_quant)
    recipe.optimizer.zero_grad()
    recipe.model(torch.randn(2, 8)).pow(2).mean().backward()
    recipe.optimizer.step()
    recipe._steps_run += 1
