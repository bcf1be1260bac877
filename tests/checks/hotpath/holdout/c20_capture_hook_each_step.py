"""Clean: the loop registers a capture-only forward hook (it returns nothing) on a submodule every step and removes it afterwards; on torch 2.13 this compiles once and the capture still sees each step's activation. From pytorch/pytorch#117758: torch.compile ignores forward hooks after compilation is triggered (the capture-only form of that report)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/117758"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    captured: dict[str, torch.Tensor] = {}

    def capture(module: nn.Module, inputs: tuple, output: torch.Tensor) -> None:
        captured["fc1"] = output.detach()

    handle = model.fc1.register_forward_hook(capture)
    try:
        with torch.no_grad():
            model(torch.randn(4, 8))
    finally:
        handle.remove()
    assert "fc1" in captured
