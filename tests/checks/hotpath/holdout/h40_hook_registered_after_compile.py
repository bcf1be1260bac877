"""Hazard: after the first compiled call, the loop registers a forward hook on a submodule that rescales its output (activation steering); the compiled graph keeps running without it. From pytorch/pytorch#117758: torch.compile ignores forward hooks after compilation is triggered."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/issues/117758"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
LATENT = (
    "silently wrong, not a recompile: on torch 2.13 Dynamo does not guard on submodule hooks "
    "(torch._dynamo.config.skip_nnmodule_hook_guards is True), so the hook added at step 2 never changes the "
    "compiled output (checked against eager forward while writing the case) and nothing is recompiled"
)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def steer(module: nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
    return output * 2.0


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    if i == 2:
        model.fc1.register_forward_hook(steer)  # turned on mid-run
    with torch.no_grad():
        model(torch.randn(4, 8))
