"""Hazard: a GraphSAGE model trained on NeighborLoader mini-batches: every sampled subgraph has a different number of nodes and edges (and `size=(num_src, num_dst)` ints), so the compiled forward fails its shape guards on the second batch and recompiles before Dynamo turns the sizes dynamic. From pytorch/pytorch#94640 (torch.compile failing for simple GNNs trained with neighbor sampling / dynamic batches)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/94640"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class SAGEConv(nn.Module):
    """MessagePassing-style mean aggregation: propagate(edge_index, x=x, size=size)."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.lin_l = nn.Linear(in_channels, out_channels)
        self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def propagate(self, edge_index, x, size):
        src, dst = edge_index
        x_j = x.index_select(0, src)  # __collect__: gather source features
        out = torch.zeros(size[1], x.size(-1), dtype=x.dtype).index_add_(0, dst, x_j)
        deg = torch.zeros(size[1], dtype=x.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return out / deg.clamp(min=1).unsqueeze(-1)

    def forward(self, x, edge_index, size):
        out = self.propagate(edge_index, x=x, size=size)
        return self.lin_l(out) + self.lin_r(x[: size[1]])


class GraphSAGE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.convs = nn.ModuleList([SAGEConv(8, 8), SAGEConv(8, 4)])

    def forward(self, x, adjs):
        for i, (edge_index, size) in enumerate(adjs):
            x = self.convs[i](x, edge_index, size)
            if i != len(self.convs) - 1:
                x = x.relu()
        return x.log_softmax(dim=-1)


def build() -> nn.Module:
    return GraphSAGE()


def _sample_batch(i: int):
    """What NeighborSampler yields: a node feature matrix and per-hop (edge_index, (num_src, num_dst))."""
    g = torch.Generator().manual_seed(i)
    n0 = 20 + 3 * i  # nodes in the 2-hop neighbourhood
    n1 = 10 + 2 * i
    n2 = 4 + i  # seed nodes of this batch
    e1 = torch.stack([torch.randint(0, n0, (2 * n1,), generator=g), torch.randint(0, n1, (2 * n1,), generator=g)])
    e2 = torch.stack([torch.randint(0, n1, (2 * n2,), generator=g), torch.randint(0, n2, (2 * n2,), generator=g)])
    return torch.randn(n0, 8, generator=g), [(e1, (n0, n1)), (e2, (n1, n2))], torch.randint(0, 4, (n2,), generator=g)


def step(model: nn.Module, i: int) -> None:
    x, adjs, y = _sample_batch(i)
    out = model(x, adjs)
    torch.nn.functional.nll_loss(out, y).backward()
