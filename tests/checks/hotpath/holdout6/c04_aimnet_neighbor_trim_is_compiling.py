"""Clean: the same AIMNet2-style potential after the fix: the neighbour-matrix trim that needs `.item()` is gated on
`torch.compiler.is_compiling()`, so under compile the padded matrix is used as is (padding contributes zero through
the cutoff mask) and the forward compiles once with no graph break, while eager keeps the trimmed fast path. From
isayevlab/aimnetcentral#109 ("every change is gated on torch.compiler.is_compiling()")."""

from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/isayevlab/aimnetcentral/pull/109"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


def trim_nbmat(nbmat: torch.Tensor, pad_idx: int) -> torch.Tensor:
    """aimnet.nbops-style helper: drop the all-padding columns of the neighbour matrix (eager only)."""
    if torch.compiler.is_compiling():
        return nbmat
    mask = nbmat != pad_idx
    nb_max = int(mask.sum(-1).max().item())
    return nbmat[:, :nb_max]


class AEVSV(nn.Module):
    def __init__(self, rc: float = 5.0, nshifts: int = 8) -> None:
        super().__init__()
        self.register_buffer("shifts", torch.linspace(0.8, rc, nshifts))
        self.rc = rc

    def forward(self, coord: torch.Tensor, nbmat: torch.Tensor) -> torch.Tensor:
        r_ij = coord[nbmat] - coord[:, None]
        d_ij = r_ij.norm(dim=-1, keepdim=True).clamp(min=1e-6)
        fc = 0.5 * (torch.cos(torch.pi * d_ij / self.rc) + 1.0) * (d_ij < self.rc)
        return torch.exp(-4.0 * (d_ij - self.shifts) ** 2) * fc


class AIMNet2(nn.Module):
    def __init__(self, num_species: int = 4, nshifts: int = 8, dim: int = 8) -> None:
        super().__init__()
        self.afv = nn.Embedding(num_species, dim)
        self.aev = AEVSV(nshifts=nshifts)
        self.conv = nn.Linear(nshifts * dim, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU(), nn.Linear(dim, 1))

    def forward(self, coord: torch.Tensor, numbers: torch.Tensor, nbmat: torch.Tensor) -> torch.Tensor:
        pad_idx = coord.shape[0] - 1  # the last atom is the padding atom
        nbmat = trim_nbmat(nbmat, pad_idx)
        g = self.aev(coord, nbmat)  # (N, M, S)
        a = self.afv(numbers)
        conv = torch.einsum("nms,nmd->nsd", g, a[nbmat]).flatten(1)
        energy = self.mlp(torch.cat([a, self.conv(conv)], dim=-1))
        return energy[:-1].sum()


def build() -> nn.Module:
    return AIMNet2()


def step(model: nn.Module, i: int) -> None:
    n = 6  # 5 atoms + 1 padding atom
    coord = torch.randn(n, 3).requires_grad_(True)
    numbers = torch.tensor([1, 2, 1, 3, 1, 0])
    nbmat = torch.full((n, 6), n - 1)
    nbmat[:-1, :4] = torch.tensor([[1, 2, 3, 4], [0, 2, 3, 4], [0, 1, 3, 4], [0, 1, 2, 4], [0, 1, 2, 3]])
    energy = model(coord, numbers, nbmat)
    (forces,) = torch.autograd.grad(energy, coord)  # calculator.eval(..., forces=True)
