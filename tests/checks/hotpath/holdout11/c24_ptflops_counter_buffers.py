"""Clean: the same ptflops-style forward hooks on the compiled model, but each module's `__flops__` counter is a 0-dim int64 buffer updated in place (`module.__flops__ += n` is a tensor add), so the hooks trace into the one graph and nothing guarded changes between steps. Look-alike of h47, from sovrasov/flops-counter.pytorch#110."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_c import add_flops_counting_buffers

LABEL = None
SOURCE = "https://github.com/sovrasov/flops-counter.pytorch/issues/110"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


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
    return add_flops_counting_buffers(net, custom_modules_hooks={MyModule: mymodule_flops_counter_hook})


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))
