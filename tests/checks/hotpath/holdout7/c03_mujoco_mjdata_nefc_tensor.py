"""Clean: the same physics step as h05 after the mujoco-torch#68 fix: `nefc`/`ncon` are wrapped as tensors when the
MjData is built, and the compiled step masks a fixed-size constraint buffer with `arange(max_efc) < nefc` instead of
slicing by a Python int, so changing contact counts never touch the guards."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import MjDataT, device_put_tensors
from tests.checks.hotpath.holdout7.h05_mujoco_mjdata_nefc_int import CONTACTS

LABEL = None
SOURCE = "https://github.com/vmoens/mujoco-torch/pull/68"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class ConstraintSolverStep(nn.Module):
    def __init__(self, nv: int = 8, max_efc: int = 12, dt: float = 0.01) -> None:
        super().__init__()
        self.dt = dt
        self.max_efc = max_efc
        self.efc_J = nn.Parameter(torch.randn(max_efc, nv) * 0.1, requires_grad=False)
        self.mass = nn.Linear(nv, nv, bias=False)

    def forward(self, d: MjDataT) -> tuple[torch.Tensor, torch.Tensor]:
        active = (torch.arange(self.max_efc) < d.nefc).to(d.qvel.dtype)
        efc_J = self.efc_J * active.unsqueeze(-1)
        efc_force = torch.relu(-(efc_J @ d.qvel))
        qfrc_constraint = efc_J.t() @ efc_force
        qacc = self.mass(-d.qpos + qfrc_constraint)
        qvel = d.qvel + self.dt * qacc
        return d.qpos + self.dt * qvel, qvel


def build() -> nn.Module:
    return ConstraintSolverStep()


def step(model: nn.Module, i: int) -> None:
    torch.manual_seed(i)
    ncon = CONTACTS[i]
    d = device_put_tensors(torch.randn(8), torch.randn(8), nefc=2 * ncon, ncon=ncon)
    with torch.no_grad():
        model(d)
