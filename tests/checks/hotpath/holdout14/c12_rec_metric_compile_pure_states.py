"""Clean: the torchrec-style metric keeps the `torch.compiler.disable`d `_aggregate_window_state` and its running-state bookkeeping eager, and only the pure-tensor `get_ne_states` computation (held as its own small module) is compiled, so the compiled region has no graph break and compiles once. From meta-pytorch/torchrec#4032 (fine-grained PT2 compilation for rec metric get_*_states, producing zero graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout14._helpers_b import WindowBuffers, _aggregate_window_state

LABEL = None
SOURCE = "https://github.com/meta-pytorch/torchrec/pull/4032"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "ne.states"


class NEStates(nn.Module):
    """The pure-tensor `get_ne_states`, the only piece `_maybe_compile()` compiles."""

    def __init__(self, eta: float = 1e-12) -> None:
        super().__init__()
        self.eta = eta

    def forward(self, labels: torch.Tensor, predictions: torch.Tensor, weights: torch.Tensor) -> dict[str, torch.Tensor]:
        eta = self.eta
        cross_entropy = -(weights * labels * torch.log2(predictions + eta) + weights * (1 - labels) * torch.log2(1 - predictions + eta))
        return {
            "cross_entropy_sum": cross_entropy.sum(-1),
            "weighted_num_samples": weights.sum(-1),
            "pos_labels": (weights * labels).sum(-1),
            "neg_labels": (weights * (1.0 - labels)).sum(-1),
        }


class NEMetricComputation(nn.Module):
    def __init__(self, n_tasks: int = 2, window_size: int = 4) -> None:
        super().__init__()
        self.states = NEStates()
        self.window = WindowBuffers(window_size)
        for name in ("cross_entropy_sum", "weighted_num_samples", "pos_labels", "neg_labels"):
            self.register_buffer(name, torch.zeros(n_tasks))

    def forward(self, predictions: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        states = self.states(labels, predictions, weights)  # compiled
        for name, value in states.items():  # eager bookkeeping
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
