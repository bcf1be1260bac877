"""Hazard: a low-bit Adam's compiled per-parameter update takes the learning rate as a Python float that a cosine scheduler changes every step, so the first new value recompiles the update (torch 2.13 then treats the float as dynamic; older torch recompiled every step). From pytorch/ao#730 (4-bit Adam slow with a non-constant lr: "torch.compile() will treat a Python float as a constant and trigger recompile")."""

from __future__ import annotations

import math

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/ao/issues/730"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "update"


class SingleParamAdam(nn.Module):
    """The fused update `torchao.prototype.low_bit_optim` compiles once per param shape."""

    def forward(self, p, grad, step, exp_avg, exp_avg_sq, lr: float, beta1: float, beta2: float, eps: float):
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias1 = 1 - beta1**step
        bias2 = 1 - beta2**step
        denom = (exp_avg_sq.sqrt() / bias2.sqrt()).add_(eps)
        p.addcdiv_(exp_avg, denom, value=-lr / bias1)


class LowBitAdamW(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = nn.Linear(8, 8)
        self.update = SingleParamAdam()
        self.state = {n: (torch.zeros_like(p), torch.zeros_like(p)) for n, p in self.model.named_parameters()}
        self.step_t = torch.zeros(())
        self.base_lr = 1e-3

    def cosine_lr(self, i: int, total: int = 8) -> float:
        return 0.5 * self.base_lr * (1 + math.cos(math.pi * i / total))


def build() -> nn.Module:
    return LowBitAdamW()


def step(model: nn.Module, i: int) -> None:
    loss = model.model(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    model.step_t += 1
    lr = model.cosine_lr(i)
    with torch.no_grad():
        p = model.model.weight
        exp_avg, exp_avg_sq = model.state["weight"]
        model.update(p, p.grad, model.step_t, exp_avg, exp_avg_sq, lr, 0.9, 0.999, 1e-8)
    model.model.zero_grad(set_to_none=True)
