"""Hazard: a mujoco-torch style physics step takes an `MjData` dataclass whose constraint count `nefc` is a plain
Python int rewritten by `device_put` every step as contacts come and go; the compiled step sizes its constraint buffer
from it, so a new count fails the guard on `d.nefc` and recompiles. From vmoens/mujoco-torch#68 (eliminate
torch.compile recompiles: wrap `nefc`/`ncon` at construction instead of passing them as Python ints)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import MjData, device_put

LABEL = "int-field"
SOURCE = "https://github.com/vmoens/mujoco-torch/pull/68"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class ConstraintSolverStep(nn.Module):
    def __init__(self, nv: int = 8, max_efc: int = 12, dt: float = 0.01) -> None:
        super().__init__()
        self.dt = dt
        self.max_efc = max_efc
        self.efc_J = nn.Parameter(torch.randn(max_efc, nv) * 0.1, requires_grad=False)
        self.mass = nn.Linear(nv, nv, bias=False)

    def forward(self, d: MjData) -> tuple[torch.Tensor, torch.Tensor]:
        efc_J = self.efc_J[: d.nefc]
        efc_force = torch.relu(-(efc_J @ d.qvel))
        qfrc_constraint = efc_J.t() @ efc_force
        qacc = self.mass(-d.qpos + qfrc_constraint)
        qvel = d.qvel + self.dt * qacc
        return d.qpos + self.dt * qvel, qvel


def build() -> nn.Module:
    return ConstraintSolverStep()


CONTACTS = [2, 2, 3, 3, 1, 4, 2, 5]


def step(model: nn.Module, i: int) -> None:
    torch.manual_seed(i)
    ncon = CONTACTS[i]
    d = device_put(torch.randn(8), torch.randn(8), nefc=2 * ncon, ncon=ncon)
    with torch.no_grad():
        model(d)
