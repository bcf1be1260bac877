"""Hazard: the GCN is compiled once and called from both `train()` (grad enabled) and a `@torch.no_grad()` `test()` every epoch, so the global-state guard fails whenever the loop switches and a second graph is compiled. From pyg-team/pytorch_geometric#8418: examples/compile folder broken, `cache_size_limit reached` with every recompile reason `___check_global_state()`."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "outside"
SOURCE = "https://github.com/pyg-team/pytorch_geometric/issues/8418"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

ADJ = (torch.eye(6) + torch.roll(torch.eye(6), 1, 0) + torch.roll(torch.eye(6), -1, 0)) / 3


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Linear(8, 8)
        self.conv2 = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = F.relu(adj @ self.conv1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        return adj @ self.conv2(x)


def build() -> nn.Module:
    model = GCN()
    model.optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    return model


def train(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    model.train()
    loss = F.cross_entropy(model(x, ADJ), y)
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()


@torch.no_grad()
def test(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    return (model(x, ADJ).argmax(-1) == y).float().mean()


def step(model: nn.Module, i: int) -> None:
    x, y = torch.randn(6, 8), torch.randint(0, 3, (6,))
    if i % 2 == 0:
        train(model, x, y)
    else:
        test(model, x, y)
