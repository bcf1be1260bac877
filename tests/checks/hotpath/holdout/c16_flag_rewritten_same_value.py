"""Clean: the loop re-assigns the adapter flag on every step, but always to the same value, so no guard ever fails. Look-alike of pytorch/pytorch#124717 (torchtune's disable_adapter flag)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/124717"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LoRALinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.base = nn.Linear(8, 8)
        self.lora_a = nn.Linear(8, 2, bias=False)
        self.lora_b = nn.Linear(2, 8, bias=False)
        self.disabled = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.base(x)
        if self.disabled:
            return out
        return out + self.lora_b(self.lora_a(x))


def build() -> nn.Module:
    return LoRALinear()


def step(model: nn.Module, i: int) -> None:
    model.disabled = False  # the recipe resets the flag each step; it never flips during training
    with torch.no_grad():
        model(torch.randn(4, 8))
