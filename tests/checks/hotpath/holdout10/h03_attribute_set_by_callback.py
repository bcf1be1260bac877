"""Hazard: a training loop's callback flips a plain attribute on a submodule (`foo` chooses the activation path) after
the model was compiled; Dynamo guards on the attribute and recompiles each time it takes a new value. From
pytorch/pytorch#98928 (changing module attributes doesn't retrigger compilation; today it does, by recompiling)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/98928"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class Foo(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.foo = "relu"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.linear(x)
        if self.foo == "relu":
            return torch.relu(x)
        if self.foo == "gelu":
            return nn.functional.gelu(x)
        return torch.tanh(x)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = Foo()
        self.head = nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


class ActivationScheduleCallback:
    """Switches the activation every few steps, as the reporter's experiment did."""

    schedule = ("relu", "relu", "gelu", "gelu", "tanh", "tanh", "relu", "gelu")

    def on_step_start(self, model: nn.Module, step: int) -> None:
        model.body.foo = self.schedule[step]


CALLBACK = ActivationScheduleCallback()


def build() -> nn.Module:
    return Net()


def step(model: nn.Module, i: int) -> None:
    CALLBACK.on_step_start(model, i)
    model(torch.randn(4, 8)).sum().backward()
