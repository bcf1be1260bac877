"""Hazard: a ptychography reconstruction (PtyRAD) compiles its forward model and switches optimisable tensors on at their configured `start_iter` by flipping `requires_grad` on the parameters from the training loop, so each switch-on iteration fails the parameters' requires_grad guards and recompiles the model. From chiahao3/ptyrad#13 (enable toggle grad on/off in torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import update_requires_grad

LABEL = "outside"
SOURCE = "https://github.com/chiahao3/ptyrad/issues/13"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # measured on the H100 machine

START_ITER = {"opt_obja": 0, "opt_objp": 0, "opt_probe": 2, "opt_probe_pos_shifts": 5}


class PtychoAD(nn.Module):
    def __init__(self, n: int = 8) -> None:
        super().__init__()
        self.opt_obja = nn.Parameter(torch.ones(n, n))
        self.opt_objp = nn.Parameter(torch.zeros(n, n))
        self.opt_probe = nn.Parameter(torch.randn(n, n) * 0.1 + 1.0)
        self.opt_probe_pos_shifts = nn.Parameter(torch.zeros(2))

    def forward(self, measured: torch.Tensor) -> torch.Tensor:
        obj = self.opt_obja * torch.exp(1j * self.opt_objp)
        shift = self.opt_probe_pos_shifts.sum()
        exit_wave = self.opt_probe * obj * torch.exp(1j * shift)
        dp = torch.fft.fft2(exit_wave).abs() ** 2
        return torch.nn.functional.mse_loss(dp.sqrt(), measured.sqrt())


def build() -> nn.Module:
    return PtychoAD()


def step(model: nn.Module, i: int) -> None:  # one reconstruction iteration of the solver loop
    update_requires_grad(model, START_ITER, i)
    loss = model(torch.rand(8, 8) + 0.5)
    loss.backward()
