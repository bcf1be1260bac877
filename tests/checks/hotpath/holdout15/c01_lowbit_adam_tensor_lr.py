"""Clean: the same torchao-style low-bit AdamW step, but the learning rate lives in a 0-d CPU tensor that the loop overwrites in place (fill_) before each step, so the compiled update reads a tensor and the schedule never touches a guard. This is the fix of pytorch/ao#736 ("Fix LR schedule handling for low-bit optimizers", for #730: keep lr as a CPU scalar tensor instead of a Python float)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout15._helpers_a import cosine_lr, single_param_adam

LABEL = None
SOURCE = "https://github.com/pytorch/ao/pull/736"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "optim_step"


class LowBitAdamStep(nn.Module):
    def __init__(self, params: list[nn.Parameter], lr: float = 1e-2, betas=(0.9, 0.99), eps: float = 1e-8):
        super().__init__()
        self.params = params
        self.beta1, self.beta2 = betas
        self.weight_decay = 0.0
        self.eps = eps
        self.register_buffer("lr", torch.tensor(lr))  # the param group's lr, as a tensor
        for k, p in enumerate(params):
            self.register_buffer(f"exp_avg_{k}", torch.zeros_like(p))
            self.register_buffer(f"exp_avg_sq_{k}", torch.zeros_like(p))
            self.register_buffer(f"step_{k}", torch.zeros(()))

    @torch.no_grad()
    def forward(self) -> None:
        for k, p in enumerate(self.params):
            single_param_adam(
                p, p.grad, getattr(self, f"step_{k}"), getattr(self, f"exp_avg_{k}"), getattr(self, f"exp_avg_sq_{k}"),
                self.lr, self.beta1, self.beta2, self.weight_decay, self.eps,
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
    model.optim_step.lr.fill_(cosine_lr(i))  # the scheduler writes into the tensor, outside the compiled step
    model.optim_step()
    model.net.zero_grad(set_to_none=False)
