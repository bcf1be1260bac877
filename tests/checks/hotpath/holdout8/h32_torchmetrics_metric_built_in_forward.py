"""Hazard: a Lightning-style classifier computes its per-batch accuracy inside the compiled forward by building a fresh torchmetrics `Accuracy(task="binary")` there and calling it; Dynamo has to trace the metric's construction (an nn.Module created mid-trace) and its `forward`/`update` bookkeeping, and graph-breaks many times on every call. From Lightning-AI/pytorch-lightning#18123 (AttributeError: '_ResultMetric' object has no attribute '_forward_pre_hooks'; the reduced example builds `Accuracy(task="binary")` inside a compiled forward). Requires torchmetrics (measured with 1.9.0)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "library-object"
SOURCE = "https://github.com/Lightning-AI/pytorch-lightning/issues/18123"
OBSERVED = {"compiles_over_8_steps": 32, "graph_breaks": 24}
OBSERVED_BY_TORCH = {"2.11": "InternalTorchDynamoError"}  # compiling fails on torch 2.11 (H100 machine)
REQUIRES = ("torchmetrics",)

try:
    from torchmetrics import Accuracy
except ImportError:  # the harness skips the case (REQUIRES)
    Accuracy = None


class LitBinaryClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.head(torch.relu(self.layer(x))).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, y.float())
        accuracy = Accuracy(task="binary")  # a throwaway metric per batch, as in the report's example
        return loss, accuracy(logits.sigmoid(), y)


def build() -> nn.Module:
    return LitBinaryClassifier()


def step(model: nn.Module, i: int) -> None:
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss, _ = model(x, y)  # training_step: loss.backward(); self.log("train_acc", acc)
    loss.backward()
