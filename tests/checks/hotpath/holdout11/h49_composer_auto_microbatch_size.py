"""Hazard: a Composer Trainer with `device_train_microbatch_size="auto"` halves the microbatch size each time a step hits CUDA OOM, so the compiled model sees a new leading batch dimension after every adjustment and recompiles (first static, then with a dynamic batch dim). From mosaicml/composer#2214 (slow startup and OOMs when using device_train_microbatch_size with torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import AutoMicrobatchTrainer

LABEL = "shape"
SOURCE = "https://github.com/mosaicml/composer/issues/2214"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class ComposerClassifier(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def build() -> nn.Module:
    model = ComposerClassifier()
    model.trainer = AutoMicrobatchTrainer(model, device_train_microbatch_size="auto", memory_budget=8)  # plain attribute, not a submodule
    return model


def step(model: nn.Module, i: int) -> None:
    model.trainer.train_batch(torch.randn(16, 8), torch.randn(16, 8), step=i)
