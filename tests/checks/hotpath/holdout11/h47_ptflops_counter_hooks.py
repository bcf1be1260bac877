"""Hazard: the `ptflops` FLOPs counter attaches forward hooks to every Linear/ReLU and each hook does `module.__flops__ += int(...)` on a Python int stored on the module; when the model is compiled the hooks run inside the traced call, so every step changes the guarded counters and recompiles (and the count is wrong). From sovrasov/flops-counter.pytorch#110 (support for torch.compile? wrong flops count if the model is compiled)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import add_flops_counting_methods

LABEL = "hook"
SOURCE = "https://github.com/sovrasov/flops-counter.pytorch/issues/110"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 0}


class MyModule(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class TestModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear_layer = nn.Linear(8, 8, bias=False)
        self.act = nn.ReLU()
        self.custom_layer = MyModule()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.custom_layer(self.act(self.linear_layer(x)))


def mymodule_flops_counter_hook(module: nn.Module, input, output) -> None:
    input = input[0]
    module.__flops__ += int(input.numel() * 8)


def build() -> nn.Module:
    net = TestModel()
    return add_flops_counting_methods(net, custom_modules_hooks={MyModule: mymodule_flops_counter_hook})


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))
