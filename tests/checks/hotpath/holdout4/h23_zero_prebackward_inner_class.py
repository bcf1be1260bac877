"""Hazard: a ZeRO-style forward pre-hook defines its `PreBackwardFunctionForModule` autograd.Function inside the hook body, and Dynamo cannot trace the class definition: the hook graph-breaks there, and the resumed frame recompiles each call on the identity of the freshly built class. From deepspeedai/DeepSpeed#7062: Avoid graph breaks in torch.compile caused by inner classes in the backward hooks (`missing: LOAD_BUILD_CLASS`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "hook"
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7062"
OBSERVED = {"compiles_over_8_steps": 10, "graph_breaks": 1}
FRAMES = 2  # the pre-hook and forward are compiled as two frames


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def _pre_forward_module_hook(module: nn.Module, args: tuple) -> tuple:
    class PreBackwardFunctionForModule(torch.autograd.Function):
        @staticmethod
        def forward(ctx, outputs):
            return outputs.detach()

        @staticmethod
        def backward(ctx, *grads):
            return grads

    (x,) = args
    return (PreBackwardFunctionForModule.apply(x),)


def build() -> nn.Module:
    model = Layer()
    model.register_forward_pre_hook(_pre_forward_module_hook)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
