"""Hazard: a multi-adapter LoRA layer looks up its active adapter by name in ModuleDicts and scales by a per-adapter Python dict, and the loop switches the active adapter between calls, so each adapter name is a new specialisation of the compiled forward. From huggingface/peft#1199 (torch.compile on PEFT LoRA: conditional logic for multiple adapters)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/huggingface/peft/issues/1199"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 2) -> None:
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict()
        self.lora_B = nn.ModuleDict()
        self.scaling: dict[str, float] = {}
        self.active_adapters: list[str] = ["default"]
        self.disable_adapters = False
        self.r = r

    def update_layer(self, adapter_name: str, lora_alpha: float) -> None:
        self.lora_A[adapter_name] = nn.Linear(self.base_layer.in_features, self.r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(self.r, self.base_layer.out_features, bias=False)
        self.scaling[adapter_name] = lora_alpha / self.r

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        if self.disable_adapters:
            return result
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            result = result + lora_B(lora_A(x)) * self.scaling[active_adapter]
        return result


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = LoraLinear(nn.Linear(8, 8))
        self.v_proj = LoraLinear(nn.Linear(8, 8))
        for layer in (self.q_proj, self.v_proj):
            layer.update_layer("toy", lora_alpha=4.0)
            layer.update_layer("pixel", lora_alpha=8.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.q_proj(x) + self.v_proj(x)


def set_adapter(model: nn.Module, name: str) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.active_adapters = [name]


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    set_adapter(model, ("toy", "pixel")[i % 2])  # alternate styles image by image
    with torch.no_grad():
        model(torch.randn(4, 8))
