"""Hazard: an MD driver rebuilds the radius graph outside the compiled potential at every step, so the number of
edges handed to the compiled message-passing block changes from step to step; the first new edge count fails the
size guard and recompiles (then the edge dimension is made dynamic). From facebookresearch/fairchem#1892 ("the number
of edges can change from iteration to iteration, this previously causes Dynamo or Triton recompiles")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import radius_graph

LABEL = "shape"
SOURCE = "https://github.com/facebookresearch/fairchem/pull/1892"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class EdgeMessageBlock(nn.Module):
    def __init__(self, sphere_channels: int = 8) -> None:
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(1, sphere_channels), nn.SiLU())
        self.node_mlp = nn.Linear(sphere_channels, sphere_channels)

    def forward(self, x: torch.Tensor, pos: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index[0], edge_index[1]
        dist = (pos[src] - pos[dst]).norm(dim=-1, keepdim=True)
        msg = self.edge_mlp(dist) * x[src]
        agg = torch.zeros_like(x).index_add(0, dst, msg)
        return x + self.node_mlp(agg)


class UMALikePotential(nn.Module):
    def __init__(self, num_atoms: int = 6, sphere_channels: int = 8, cutoff: float = 1.6) -> None:
        super().__init__()
        self.cutoff = cutoff
        self.atom_embedding = nn.Parameter(torch.randn(num_atoms, sphere_channels) * 0.1)
        self.backbone = EdgeMessageBlock(sphere_channels)
        self.energy_head = nn.Linear(sphere_channels, 1)

    def forward(self, pos: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        x = self.backbone(self.atom_embedding, pos, edge_index)
        return self.energy_head(x).sum()


def build() -> nn.Module:
    return UMALikePotential()


REGION = "backbone"
TRAJECTORY = torch.linspace(0.6, 1.4, 8)


def step(model: nn.Module, i: int) -> None:
    torch.manual_seed(1)
    pos = torch.rand(6, 3) * float(TRAJECTORY[i]) * 2.0  # the box breathes, atoms come in and out of the cutoff
    edge_index = radius_graph(pos, model.cutoff)
    with torch.no_grad():
        model(pos, edge_index)
