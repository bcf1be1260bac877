"""Clean: the tensor product from h08 after cuEquivariance#35 ("avoid calling irreps.dim and logger in forward"): the
sizes are read from the `Irreps` objects once in `__init__` into plain ints and the debug log moves to construction,
so the compiled forward is pure tensor code (one compile, no break). Report: NVIDIA/cuEquivariance#32."""
from __future__ import annotations

import logging

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import Irreps

LABEL = None
SOURCE = "https://github.com/NVIDIA/cuEquivariance/issues/32"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

logger = logging.getLogger("cuequivariance_torch.operations.tp_fully_connected")


class FullyConnectedTensorProduct(nn.Module):
    def __init__(self, irreps_in1: Irreps, irreps_in2: Irreps, irreps_out: Irreps) -> None:
        super().__init__()
        self.irreps_in1, self.irreps_in2, self.irreps_out = irreps_in1, irreps_in2, irreps_out
        self.dim_in1, self.dim_in2, self.dim_out = irreps_in1.dim, irreps_in2.dim, irreps_out.dim
        self.weight = nn.Parameter(torch.randn(self.dim_in1 * self.dim_in2, self.dim_out) * 0.1)
        logger.debug(f"Built FullyConnectedTensorProduct: {irreps_in1} x {irreps_in2} -> {irreps_out}")

    def forward(self, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
        torch._assert(x1.shape[-1] == self.dim_in1, "input 1 has the wrong size")
        torch._assert(x2.shape[-1] == self.dim_in2, "input 2 has the wrong size")
        outer = (x1.unsqueeze(-1) * x2.unsqueeze(-2)).flatten(-2)
        return outer @ self.weight


class InteractionBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        irreps = Irreps("O3", "2x0e + 2x1o")
        self.tp = FullyConnectedTensorProduct(irreps, Irreps("O3", "1x0e + 1x1o"), irreps)
        self.skip = nn.Linear(irreps.dim, irreps.dim)

    def forward(self, node_feats: torch.Tensor, edge_attrs: torch.Tensor) -> torch.Tensor:
        return self.skip(node_feats) + self.tp(node_feats, edge_attrs)


def build() -> nn.Module:
    return InteractionBlock()


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(5, 8), torch.randn(5, 4)).pow(2).mean().backward()
