"""Clean: the same optimizer with a compiled per-parameter update, but `state["step"]` is a 0-d tensor (as torch.optim keeps it for compiled optimizers) incremented in place, so the compiled update sees the same guards every step and compiles once. Look-alike of h10, from Koratahiu/Advanced_Optimizers#6."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Koratahiu/Advanced_Optimizers/pull/6"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class StepParameter(nn.Module):
    def forward(self, p: torch.Tensor, grad: torch.Tensor, state: dict, group: dict) -> None:
        state["step"].add_(1)
        beta1, beta2 = group["betas"]
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias1 = 1 - beta1 ** state["step"]
        bias2 = 1 - beta2 ** state["step"]
        denom = (state["exp_avg_sq"] / bias2).sqrt().add_(group["eps"])
        p.sub_(state["exp_avg"] / denom * (group["lr"] / bias1))


class AdamAdv(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))
        self.step_parameter = StepParameter()

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                self.step_parameter(p, p.grad, state, group)


class TrainState(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 1, bias=False)
        self.optimizer = AdamAdv(self.net.parameters())
        self.step_parameter = self.optimizer.step_parameter


REGION = "step_parameter"


def build() -> nn.Module:
    return TrainState()


def step(model: nn.Module, i: int) -> None:
    loss = model.net(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()
