"""Hazard: a torchao-style low-bit AdamW compiles its per-parameter update and is handed the learning rate as a Python float that a cosine schedule changes every step; Dynamo specialises on the float, recompiles when it changes, and only then treats it as dynamic. From pytorch/ao#463 (8-bit Adam: "when learning rate is updated every step (e.g. using cosine learning rate scheduler), training speed decreases significantly ... torch.compile() will treat a Python float as a constant and trigger recompile whenever the value is changed")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import cosine_lr, single_param_adam

LABEL = "float"
SOURCE = "https://github.com/pytorch/ao/pull/463"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
REGION = "optim_step"


class LowBitAdamStep(nn.Module):
    """The optimizer's compiled inner step: one AdamW update per parameter, state kept in buffers."""

    def __init__(self, params: list[nn.Parameter], betas=(0.9, 0.99), weight_decay: float = 0.0, eps: float = 1e-8):
        super().__init__()
        self.params = params
        self.beta1, self.beta2 = betas
        self.weight_decay = weight_decay
        self.eps = eps
        for k, p in enumerate(params):
            self.register_buffer(f"exp_avg_{k}", torch.zeros_like(p))
            self.register_buffer(f"exp_avg_sq_{k}", torch.zeros_like(p))
            self.register_buffer(f"step_{k}", torch.zeros(()))

    @torch.no_grad()
    def forward(self, lr: float) -> None:
        for k, p in enumerate(self.params):
            single_param_adam(
                p, p.grad, getattr(self, f"step_{k}"), getattr(self, f"exp_avg_{k}"), getattr(self, f"exp_avg_sq_{k}"),
                lr, self.beta1, self.beta2, self.weight_decay, self.eps,
            )


class Finetune(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
        self.optim_step = LowBitAdamStep(list(self.net.parameters()))


def build() -> nn.Module:
    return Finetune()


def step(model: nn.Module, i: int) -> None:
    x = torch.randn(4, 8)
    target = torch.randint(0, 4, (4,))
    loss = nn.functional.cross_entropy(model.net(x), target)
    loss.backward()
    model.optim_step(cosine_lr(i))  # the schedule's value goes in as a Python float
    model.net.zero_grad(set_to_none=False)
