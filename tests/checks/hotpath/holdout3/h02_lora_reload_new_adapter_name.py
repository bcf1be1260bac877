"""Hazard: each `load_lora_weights` between generations adds a new adapter name ("default_1", "default_2", ...) to the LoRA layer's ModuleDicts and `scaling` dict, which the compiled UNet/transformer guards on, so every reload recompiles. From huggingface/diffusers#9279 (Support dynamic LoRA loading with a `torch.compile`d model)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/huggingface/diffusers/issues/9279"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear) -> None:
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict()
        self.lora_B = nn.ModuleDict()
        self.scaling: dict[str, float] = {}
        self.active_adapters: list[str] = []

    def update_layer(self, adapter_name: str, r: int, lora_alpha: float) -> None:
        self.lora_A[adapter_name] = nn.Linear(self.base_layer.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.base_layer.out_features, bias=False)
        self.scaling[adapter_name] = lora_alpha / r

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A:
                continue
            result = result + self.lora_B[active_adapter](self.lora_A[active_adapter](x)) * self.scaling[active_adapter]
        return result


class Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj_in = LoraLinear(nn.Linear(8, 8))
        self.proj_out = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.proj_out(torch.relu(self.proj_in(hidden_states)))


def load_lora_weights(model: Transformer, adapter_name: str, rank: int, alpha: float) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.update_layer(adapter_name, rank, alpha)
            module.active_adapters = [adapter_name]


def build() -> nn.Module:
    model = Transformer()
    load_lora_weights(model, "default_0", rank=4, alpha=4.0)
    return model


def step(model: nn.Module, i: int) -> None:
    # a serving loop: every other request brings a different LoRA checkpoint
    if i and i % 2 == 0:
        load_lora_weights(model, f"default_{i // 2}", rank=4, alpha=8.0)
    with torch.no_grad():
        model(torch.randn(2, 8))
