"""Hazard: a MACE-style interatomic potential computes forces inside its compiled forward by calling
`torch.autograd.grad` on the energy (through `get_outputs`/`compute_forces` in the model's utils module); Dynamo
cannot trace the inner autograd call, so every call splits the forward at the gradient. From ACEsuit/mace#300 (the
remaining graph break in the compiled model is the autograd force evaluation)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import get_outputs

LABEL = "graph-break"
SOURCE = "https://github.com/ACEsuit/mace/pull/300"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 4}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 7, "graph_breaks": 4}, "2.15": {"compiles_over_8_steps": 14, "graph_breaks": 11}}  # 2.11: measured on the H100 machine; 2.15 measured on the CPU-only machine (2.15.0+cu132)


class RadialEmbedding(nn.Module):
    def __init__(self, num_bessel: int = 8) -> None:
        super().__init__()
        self.register_buffer("freqs", torch.arange(1, num_bessel + 1).float() * torch.pi / 5.0)

    def forward(self, lengths: torch.Tensor) -> torch.Tensor:
        return torch.sin(self.freqs * lengths) / lengths


class ScaleShiftMACE(nn.Module):
    def __init__(self, hidden: int = 8) -> None:
        super().__init__()
        self.radial_embedding = RadialEmbedding(hidden)
        self.interaction = nn.Linear(hidden, hidden)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, data: dict, training: bool = False, compute_force: bool = True) -> dict:
        positions = data["positions"]
        positions.requires_grad_(True)
        sender, receiver = data["edge_index"]
        vectors = positions[receiver] - positions[sender]
        lengths = torch.linalg.norm(vectors, dim=-1, keepdim=True)
        edge_feats = self.radial_embedding(lengths)
        node_feats = torch.zeros(positions.shape[0], edge_feats.shape[1]).index_add(0, receiver, edge_feats)
        node_energy = self.readout(torch.nn.functional.silu(self.interaction(node_feats)))
        energy = node_energy.sum()
        return get_outputs(energy, positions, training=training, compute_force=compute_force)


def build() -> nn.Module:
    return ScaleShiftMACE()


EDGES = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])


def step(model: nn.Module, i: int) -> None:
    data = {"positions": torch.randn(4, 3), "edge_index": EDGES}
    out = model(data, training=True)
    loss = out["energy"].pow(2) + out["forces"].pow(2).mean()
    loss.backward()
