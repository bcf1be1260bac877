"""Hazard: a message-passing interaction block aggregates edge messages with a torch_scatter-style `scatter_sum(..., dim=0)` without passing `dim_size`, so the helper sizes the output with `int(index.max()) + 1`; the `Tensor.item()` behind it graph-breaks inside every compiled interaction. From rusty1s/pytorch_scatter#457 (graph break when compiling a model with scatter_add)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_a import scatter_sum

LABEL = "item-branch"
SOURCE = "https://github.com/rusty1s/pytorch_scatter/issues/457"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}


class InteractionBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.message = nn.Linear(8, 8)
        self.update = nn.Linear(8, 8)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index
        msg = self.message(h[src])
        agg = scatter_sum(msg, dst, dim=0)
        return h + self.update(agg)


EDGES = torch.tensor([[0, 1, 2, 3, 4, 5, 1, 2], [1, 2, 3, 4, 5, 0, 0, 5]])


def build() -> nn.Module:
    return InteractionBlock()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(6, 8), EDGES).sum().backward()
