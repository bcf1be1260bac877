"""Clean: a profiling pre-hook wrapped in `torch.compiler.disable()` is registered on the model before `model.compile()`; on torch 2.13 only the hook runs eager and the forward compiles once with no break (the reported bug, where the disabled hook turned off compilation of the whole module, no longer reproduces). From pytorch/pytorch#142358 (torch.compiler.disable() on module hooks will disable module.compile())."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/142358"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

SEEN_SHAPES: list[tuple[int, ...]] = []


@torch.compiler.disable()
def record_input(module: nn.Module, args: tuple) -> None:
    SEEN_SHAPES.append(tuple(args[0].shape))


class MLP(nn.Module):
    def __init__(self, d_model: int = 8) -> None:
        super().__init__()
        self.up = nn.Linear(d_model, d_model)
        self.down = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(nn.functional.gelu(self.up(x)))


def build() -> nn.Module:
    SEEN_SHAPES.clear()
    model = MLP()
    model.register_forward_pre_hook(record_input)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(4, 8)).sum().backward()
