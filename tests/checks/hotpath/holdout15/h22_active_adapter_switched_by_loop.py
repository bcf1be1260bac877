"""Hazard: a PEFT-style LoRA layer inside a compiled diffusers-style UNet block loops over `self.active_adapters` and checks `self.disable_adapters`, and the pipeline switches the active adapter between calls (`set_adapters("pixel")` / `set_adapters("toy")`, as in multi-adapter inference), so the compiled block's Python branching state changes from the loop. From huggingface/diffusers#6190 (enabling torch.compile tests for PEFT: the multi-adapter code path has conditional logic on which adapters are active, so `fullgraph=True` fails and compile only works with graph breaks; maintainers suggest fusing the LoRA instead)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/huggingface/diffusers/pull/6190"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, adapters: tuple[str, ...], r: int = 2) -> None:
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict({a: nn.Linear(base.in_features, r, bias=False) for a in adapters})
        self.lora_B = nn.ModuleDict({a: nn.Linear(r, base.out_features, bias=False) for a in adapters})
        self.scaling = dict.fromkeys(adapters, 0.5)
        self.active_adapters: list[str] = [adapters[0]]
        self.disable_adapters = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        if self.disable_adapters:
            return result
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A:
                continue
            result = result + self.lora_B[active_adapter](self.lora_A[active_adapter](x)) * self.scaling[active_adapter]
        return result


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.to_q = LoraLinear(nn.Linear(dim, dim), ("pixel", "toy"))
        self.to_out = LoraLinear(nn.Linear(dim, dim), ("pixel", "toy"))

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.to_out(torch.nn.functional.gelu(self.to_q(self.norm(hidden_states))))


def set_adapters(model: nn.Module, names: list[str]) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.active_adapters = list(names)


def build() -> nn.Module:
    return TransformerBlock()


def step(model: nn.Module, i: int) -> None:
    set_adapters(model, ["pixel"] if i % 2 == 0 else ["toy"])
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
