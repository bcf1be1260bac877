"""Clean: the torchrec NE metric of meta-pytorch/torchrec#4283 with the window kept the way the fix does it (a fixed-size tensor ring and a tensor cursor standing in for the custom op): updating it inside the compiled train step changes only tensor contents, never a Python container or int, so the step compiles once."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import RingWindow

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4283"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class NEMetricComputation(nn.Module):
    def __init__(self, window_size: int = 64, batch_size: int = 4) -> None:
        super().__init__()
        self.register_buffer("window_cross_entropy_sum", torch.zeros(1))
        self._batch_window_buffers = {"window_cross_entropy_sum": RingWindow(window_size // batch_size, 1)}

    def update(self, predictions: torch.Tensor, labels: torch.Tensor) -> None:
        ce = nn.functional.binary_cross_entropy_with_logits(predictions, labels, reduction="sum").detach()
        self._batch_window_buffers["window_cross_entropy_sum"].aggregate_state(
            self.window_cross_entropy_sum, ce.reshape(1)
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
