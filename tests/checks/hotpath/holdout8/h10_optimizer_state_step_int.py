"""Hazard: an optimizer compiles its per-parameter update (`step_parameter`) and increments `self.state[p]["step"]`, a Python int in the optimizer's state dict, inside the compiled region for the bias correction; the int is guarded, so the update recompiles on the next step (then is made dynamic). From Koratahiu/Advanced_Optimizers#6 ("if this line is in __step_parameter, compile guards fail for each step")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "counter"
SOURCE = "https://github.com/Koratahiu/Advanced_Optimizers/pull/6"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class StepParameter(nn.Module):
    """The compiled per-parameter Adam-style update the optimizer calls for each parameter."""

    def forward(self, p: torch.Tensor, grad: torch.Tensor, state: dict, group: dict) -> None:
        state["step"] += 1
        beta1, beta2 = group["betas"]
        state["exp_avg"].lerp_(grad, 1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias1 = 1 - beta1 ** state["step"]
        bias2 = 1 - beta2 ** state["step"]
        denom = (state["exp_avg_sq"] / bias2).sqrt().add_(group["eps"])
        p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / bias1)


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
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                self.step_parameter(p, p.grad, state, group)


class TrainState(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Linear(8, 1, bias=False)
        self.optimizer = AdamAdv(self.net.parameters())
        self.step_parameter = self.optimizer.step_parameter  # registered so REGION can name it


REGION = "step_parameter"


def build() -> nn.Module:
    return TrainState()


def step(model: nn.Module, i: int) -> None:
    loss = model.net(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    model.optimizer.step()
    model.optimizer.zero_grad()
