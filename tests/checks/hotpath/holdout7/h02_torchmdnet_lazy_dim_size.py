"""Hazard: a torchmd-net style output head sizes its per-molecule energy scatter from `batch.max().item()` the first
time it runs and caches the result on the module, so the first compiled call graph-breaks on `.item()` and the cached
int then changes the guards (recompile). From openmm/openmm-ml#129, whose fix runs one eager no-grad pass before
`torch.compile` to set the internal dim_size values."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import scatter

LABEL = "item-branch"
SOURCE = "https://github.com/openmm/openmm-ml/pull/129"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class Scalar(nn.Module):
    """OutputModel: per-atom MLP, then reduce to per-molecule energies."""

    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.output_network = nn.Sequential(nn.Linear(hidden, hidden // 2), nn.SiLU(), nn.Linear(hidden // 2, 1))
        self.dim_size: Optional[int] = None

    def pre_reduce(self, x: torch.Tensor) -> torch.Tensor:
        return self.output_network(x)

    def reduce(self, x: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
        if self.dim_size is None:
            self.dim_size = int(batch.max().item() + 1)
        return scatter(x, batch, dim=0, dim_size=self.dim_size, reduce="sum")


class TorchMD_Net(nn.Module):
    def __init__(self, hidden: int = 8, max_z: int = 10) -> None:
        super().__init__()
        self.embedding = nn.Embedding(max_z, hidden)
        self.representation = nn.Linear(hidden + 3, hidden)
        self.output_model = Scalar(hidden)

    def forward(self, z: torch.Tensor, pos: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
        x = self.representation(torch.cat([self.embedding(z), pos], dim=-1))
        x = self.output_model.pre_reduce(x)
        return self.output_model.reduce(x, batch)


def build() -> nn.Module:
    return TorchMD_Net()


Z = torch.tensor([1, 6, 8, 1, 1, 6])
BATCH = torch.tensor([0, 0, 0, 1, 1, 1])


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(Z, torch.randn(6, 3), BATCH)  # MD loop: same molecules, new positions every step
