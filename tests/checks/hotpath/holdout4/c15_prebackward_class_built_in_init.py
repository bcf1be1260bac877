"""Clean: the same ZeRO-style forward pre-hook, but the `PreBackwardFunctionForModule` autograd.Function is defined once when the hooks are set up and the hook only calls `.apply`, so Dynamo compiles the hook frame and the forward frame once each, with no break. From deepspeedai/DeepSpeed#7062: Avoid graph breaks in torch.compile caused by inner classes in the backward hooks (classes moved into the initialization code)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/deepspeedai/DeepSpeed/pull/7062"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
FRAMES = 2  # the pre-hook and forward are compiled as two frames


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def setup_zero_stage3_hooks(module: nn.Module) -> None:
    class PreBackwardFunctionForModule(torch.autograd.Function):
        @staticmethod
        def forward(ctx, outputs):
            return outputs.detach()

        @staticmethod
        def backward(ctx, *grads):
            return grads

    def _pre_forward_module_hook(mod: nn.Module, args: tuple) -> tuple:
        (x,) = args
        return (PreBackwardFunctionForModule.apply(x),)

    module.register_forward_pre_hook(_pre_forward_module_hook)


def build() -> nn.Module:
    model = Layer()
    setup_zero_stage3_hooks(model)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
