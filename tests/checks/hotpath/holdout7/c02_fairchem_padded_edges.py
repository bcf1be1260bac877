"""Clean: the same MD loop and message-passing block as h03, but the graph builder pads the edge list to a fixed
`max_edges` and passes a validity mask, so the compiled block always sees the same shapes however many atoms are
within the cutoff (the fixed-shape edge layout fairchem#1892 discusses as the alternative to dynamic edge counts)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import radius_graph_pbc_padded
from tests.checks.hotpath.holdout7.h03_fairchem_md_edge_count import TRAJECTORY

LABEL = None
SOURCE = "https://github.com/facebookresearch/fairchem/pull/1892"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class MaskedEdgeMessageBlock(nn.Module):
    def __init__(self, sphere_channels: int = 8) -> None:
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(1, sphere_channels), nn.SiLU())
        self.node_mlp = nn.Linear(sphere_channels, sphere_channels)

    def forward(self, x: torch.Tensor, pos: torch.Tensor, edge_index: torch.Tensor, edge_mask: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index[0], edge_index[1]
        dist = (pos[src] - pos[dst]).norm(dim=-1, keepdim=True)
        msg = self.edge_mlp(dist) * x[src] * edge_mask.unsqueeze(-1).to(x.dtype)
        agg = torch.zeros_like(x).index_add(0, dst, msg)
        return x + self.node_mlp(agg)


class PaddedUMALikePotential(nn.Module):
    def __init__(self, num_atoms: int = 6, sphere_channels: int = 8, cutoff: float = 1.6, max_edges: int = 30) -> None:
        super().__init__()
        self.cutoff = cutoff
        self.max_edges = max_edges
        self.atom_embedding = nn.Parameter(torch.randn(num_atoms, sphere_channels) * 0.1)
        self.backbone = MaskedEdgeMessageBlock(sphere_channels)
        self.energy_head = nn.Linear(sphere_channels, 1)

    def forward(self, pos: torch.Tensor, edge_index: torch.Tensor, edge_mask: torch.Tensor) -> torch.Tensor:
        x = self.backbone(self.atom_embedding, pos, edge_index, edge_mask)
        return self.energy_head(x).sum()


def build() -> nn.Module:
    return PaddedUMALikePotential()


REGION = "backbone"


def step(model: nn.Module, i: int) -> None:
    torch.manual_seed(1)
    pos = torch.rand(6, 3) * float(TRAJECTORY[i]) * 2.0
    edge_index, edge_mask = radius_graph_pbc_padded(pos, model.cutoff, model.max_edges)
    with torch.no_grad():
        model(pos, edge_index, edge_mask)
