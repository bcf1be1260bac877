"""Hazard: a LoRA-style `disabled` flag on the module is toggled by the loop (reference pass without the adapter every other step). From pytorch/pytorch#124717: Compile doesn't guard on user NN module attribute (torchtune disable_adapter)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/pytorch/pytorch/issues/124717"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


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
    model.disabled = i % 2 == 1  # DPO-style: policy pass, then reference pass with the adapter disabled
    with torch.no_grad():
        model(torch.randn(4, 8))
