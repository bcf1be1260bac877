"""Hazard: an RGCN-style conv sizes its relation segments with `int(tensor)` and asks a backend heuristic (another module) that ends in `bool(tensor)`, so every forward graph-breaks and the resumed frames recompile on the segment sizes they were handed. From pyg-team/pytorch_geometric#8467: RGCNConv has multiple graph breaks (`int` and `bool` on a TensorVariable in `use_segment_matmul_heuristic`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout4 import _helpers_b

LABEL = "item-branch"
SOURCE = "https://github.com/pyg-team/pytorch_geometric/issues/8467"
OBSERVED = {"compiles_over_8_steps": 11, "graph_breaks": 10}

NUM_NODES = 6
NUM_RELATIONS = 3


class RGCNConv(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, num_relations: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = nn.Parameter(torch.randn(num_relations, in_channels, out_channels) * 0.1)
        self.root = nn.Linear(in_channels, out_channels)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_type: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index
        counts = torch.bincount(edge_type, minlength=self.weight.shape[0])
        num_segments = int((counts > 0).sum())
        max_segment_size = int(counts.max())
        use_segment_matmul = _helpers_b.use_segment_matmul
        if use_segment_matmul is None:
            use_segment_matmul = _helpers_b.use_segment_matmul_heuristic(
                num_segments, max_segment_size, self.in_channels, self.out_channels
            )
        if use_segment_matmul:
            messages = torch.bmm(x[src].unsqueeze(1), self.weight[edge_type]).squeeze(1)
        else:
            messages = torch.zeros(src.shape[0], self.out_channels)
            for rel in range(self.weight.shape[0]):
                mask = (edge_type == rel).unsqueeze(-1)
                messages = messages + mask * (x[src] @ self.weight[rel])
        out = torch.zeros(x.shape[0], self.out_channels).index_add_(0, dst, messages)
        return out + self.root(x)


def build() -> nn.Module:
    return RGCNConv(8, 8, NUM_RELATIONS)


EDGE_INDEX = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 0], [1, 0, 2, 3, 4, 5, 0, 3]])


def step(model: nn.Module, i: int) -> None:
    edge_type = torch.randint(0, NUM_RELATIONS, (EDGE_INDEX.shape[1],))
    with torch.no_grad():
        model(torch.randn(NUM_NODES, 8), EDGE_INDEX, edge_type)
