"""Hazard: a torchrec-style NE metric updated inside the compiled train step keeps a `WindowBuffer` whose deque of per-batch states grows (and is trimmed) on every update, so each step's deque length and `_window_used_size` int fail the guards and recompile until the recompile limit; torchrec wrapped the aggregation in `torch.compiler.disable` "as it would exceed the recompilation limit". From meta-pytorch/torchrec#4283."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import WindowBuffer

LABEL = "container"
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4283"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class NEMetricComputation(nn.Module):
    def __init__(self, window_size: int = 64, batch_size: int = 4) -> None:
        super().__init__()
        self.register_buffer("window_cross_entropy_sum", torch.zeros(1))
        self._batch_window_buffers = {
            "window_cross_entropy_sum": WindowBuffer(max_size=window_size, max_buffer_count=window_size // batch_size)
        }

    def update(self, predictions: torch.Tensor, labels: torch.Tensor) -> None:
        ce = nn.functional.binary_cross_entropy_with_logits(predictions, labels, reduction="sum").detach()
        self._batch_window_buffers["window_cross_entropy_sum"].aggregate_state(
            self.window_cross_entropy_sum, ce.reshape(1), predictions.shape[0]
        )


class DLRMTrainStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.dense_arch = nn.Linear(8, 8)
        self.over_arch = nn.Linear(8, 1)
        self.ne = NEMetricComputation()

    def forward(self, dense_features: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.over_arch(torch.relu(self.dense_arch(dense_features))).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, labels)
        self.ne.update(logits, labels)
        return loss


def build() -> nn.Module:
    return DLRMTrainStep()


def step(model: nn.Module, i: int) -> None:
    loss = model(torch.randn(4, 8), (torch.rand(4) > 0.5).float())
    loss.backward()
