"""Clean: the same evaluation loop over 10 samples in batches of 4, but the loader pads the short tail batch to the full batch size and the metric uses only the valid rows, so every call has the same shape. Look-alike of pytorch/pytorch#139202 (recompile when the input size changes)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_a import eval_batches

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/139202"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
        _BATCHES.extend(eval_batches(num_samples=10, batch_size=4, pad_last=True))
    x, valid = _BATCHES.pop(0)
    with torch.no_grad():
        model(x)[:valid]
