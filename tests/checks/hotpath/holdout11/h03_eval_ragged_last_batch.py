"""Hazard: the evaluation loop walks a dataset of 10 samples in batches of 4, so every pass ends on a 2-sample batch whose new batch size fails the shape guard and recompiles the model (then marks the dim dynamic). From pytorch/pytorch#139202 (recompile when the input size changes, (2, 3) then (2, 4))."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import eval_batches

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/139202"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Classifier(nn.Module):
    def __init__(self, dim: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x)).log_softmax(-1)


_BATCHES: list = []


def build() -> nn.Module:
    _BATCHES.clear()
    return Classifier()


def step(model: nn.Module, i: int) -> None:
    if not _BATCHES:
        _BATCHES.extend(eval_batches(num_samples=10, batch_size=4))
    x, _valid = _BATCHES.pop(0)
    with torch.no_grad():
        model(x)
