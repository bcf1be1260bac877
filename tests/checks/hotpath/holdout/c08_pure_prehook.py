"""Clean: forward pre-hooks registered before compiling only transform the input tensor and keep no Python state (FRAMES = 2: with module.compile() the root's pre-hook is traced as its own frame, the submodule's is inlined into forward). Look-alike of pytorch/pytorch#117584: module register_pre_forward_hook ... (a pre-hook returning `input[0] + 1`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/117584"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
FRAMES = 2


def shift_input(module: nn.Module, args: tuple) -> tuple:
    return (args[0] + 1,)


class ToyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net1 = nn.Linear(8, 8, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net1(x)


def build() -> nn.Module:
    model = ToyModel()
    model.register_forward_pre_hook(shift_input)
    model.net1.register_forward_pre_hook(shift_input)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
