"""Hazard: a torchrec-style metric computation module is compiled as a whole, and its update calls the library's `_aggregate_window_state`, which is wrapped in `torch.compiler.disable`; every call splits the compiled update at the disabled helper (graph breaks on each state). From meta-pytorch/torchrec#4032 (compiling `_update_metrics` causes ~42 graph breaks per call due to `torch.compiler.disable` on `_aggregate_window_state`; compile only the pure-tensor `get_*_states`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import WindowBuffers, _aggregate_window_state

LABEL = "graph-break"
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4032"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


def get_ne_states(labels: torch.Tensor, predictions: torch.Tensor, weights: torch.Tensor, eta: float) -> dict[str, torch.Tensor]:
    cross_entropy = -(weights * labels * torch.log2(predictions + eta) + weights * (1 - labels) * torch.log2(1 - predictions + eta))
    return {
        "cross_entropy_sum": cross_entropy.sum(-1),
        "weighted_num_samples": weights.sum(-1),
        "pos_labels": (weights * labels).sum(-1),
        "neg_labels": (weights * (1.0 - labels)).sum(-1),
    }


class NEMetricComputation(nn.Module):
    """Holds running states like torchrec's RecMetricComputation (itself an nn.Module via torchmetrics.Metric)."""

    def __init__(self, n_tasks: int = 2, window_size: int = 4) -> None:
        super().__init__()
        self.eta = 1e-12
        self.window = WindowBuffers(window_size)
        for name in ("cross_entropy_sum", "weighted_num_samples", "pos_labels", "neg_labels"):
            self.register_buffer(name, torch.zeros(n_tasks))

    def forward(self, predictions: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        # _update_metrics: compute the batch states, add them to the lifetime states, aggregate the window states
        states = get_ne_states(labels, predictions, weights, self.eta)
        for name, value in states.items():
            getattr(self, name).add_(value)
            _aggregate_window_state(self.window.states, name, value, self.window.window_size)
        return self.cross_entropy_sum / self.weighted_num_samples.clamp(min=1.0)


class RecMetricModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ne = NEMetricComputation()

    def forward(self, predictions: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return self.ne(predictions, labels, weights)


def build() -> nn.Module:
    return RecMetricModule()


def step(model: nn.Module, i: int) -> None:
    predictions = torch.rand(2, 8).clamp(0.01, 0.99)
    labels = (torch.rand(2, 8) > 0.5).float()
    weights = torch.ones(2, 8)
    model(predictions, labels, weights)
