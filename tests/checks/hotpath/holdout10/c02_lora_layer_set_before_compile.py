"""Clean: the diffusers-style `LoraCompatibleLinear` gets its adapter through `set_lora_layer(...)` once, before the
model is compiled, and the loop never swaps it afterwards, so the `lora_layer is None` branch is fixed for the whole
run; the safe shape of pytorch/pytorch#120958."""
from __future__ import annotations

from typing import Optional

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/120958"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LoRALinearLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, rank: int = 2) -> None:
        super().__init__()
        self.down = nn.Linear(in_features, rank, bias=False)
        self.up = nn.Linear(rank, out_features, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.up(self.down(hidden_states))


class LoraCompatibleLinear(nn.Linear):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lora_layer: Optional[nn.Module] = None

    def set_lora_layer(self, lora_layer: Optional[nn.Module]) -> None:
        self.lora_layer = lora_layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.lora_layer is None:
            return super().forward(x)
        return super().forward(x) + self.lora_layer(x)


class AttnProcessorBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = LoraCompatibleLinear(8, 8)
        self.to_out = LoraCompatibleLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.to_out(torch.relu(self.to_q(x)))


def build() -> nn.Module:
    model = AttnProcessorBlock()
    model.to_q.set_lora_layer(LoRALinearLayer(8, 8))  # pipe.load_lora_weights(...) before compiling
    model.to_out.set_lora_layer(LoRALinearLayer(8, 8))
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))
