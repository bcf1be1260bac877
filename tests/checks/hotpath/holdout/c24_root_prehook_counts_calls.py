"""Clean: a forward pre-hook on the compiled root module bumps a Python call counter. With module.compile() the root's hooks run as their own frames; this one has no tensor work, so Dynamo leaves it to Python and the forward frame compiles once (FRAMES = 2: hook frame + forward frame). Look-alike of pytorch/pytorch#170110: Submodule forward hook with kwargs cause recompilation (only hooks on submodules, which are inlined, recompile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/170110"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
FRAMES = 2


def count_forward(module: nn.Module, args: tuple) -> None:
    module.n_forward += 1


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.n_forward = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def build() -> nn.Module:
    model = Model()
    model.register_forward_pre_hook(count_forward)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
