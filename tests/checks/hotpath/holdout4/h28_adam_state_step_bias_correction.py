"""Hazard: a compiled per-parameter Adam update reads the step count from its optimizer-state dict for bias correction, and the loop bumps `state["step"]` (a Python int) after every update, so the guard on the step value fails. From pytorch/ao#2500: torch compile call every time (`single_param_adam(..., state["step"], ...)` recompiled each step)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/ao/issues/2500"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class SingleParamAdam(nn.Module):
    def __init__(self, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__()
        self.param = nn.Parameter(torch.randn(8, 8))
        self.register_buffer("exp_avg", torch.zeros(8, 8))
        self.register_buffer("exp_avg_sq", torch.zeros(8, 8))
        self.lr, self.betas, self.eps = lr, betas, eps
        self.state = {"step": 1}

    def forward(self, grad: torch.Tensor) -> None:
        beta1, beta2 = self.betas
        step = self.state["step"]
        self.exp_avg.lerp_(grad, 1 - beta1)
        self.exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        denom = (self.exp_avg_sq / bias_correction2).sqrt().add_(self.eps)
        self.param.data.addcdiv_(self.exp_avg, denom, value=-self.lr / bias_correction1)


def build() -> nn.Module:
    return SingleParamAdam()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(8, 8))
    model.state["step"] += 1
