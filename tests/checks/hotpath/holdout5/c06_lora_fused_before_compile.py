"""Clean: the LoRA-style layer still carries adapter dicts and a `merged` flag, but the pipeline fuses the adapter into the base weight once before compiling and never switches adapters, so forward takes the same merged path every call. From huggingface/diffusers#6864 (note: fuse the LoRA weights before torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/6864"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, r: int = 2, alpha: float = 4.0) -> None:
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.ModuleDict({"pixel": nn.Linear(base.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"pixel": nn.Linear(r, base.out_features, bias=False)})
        self.scaling = {"pixel": alpha / r}
        self.active_adapter = "pixel"
        self.merged = False

    @torch.no_grad()
    def fuse(self) -> None:
        name = self.active_adapter
        delta = self.lora_B[name].weight @ self.lora_A[name].weight * self.scaling[name]
        self.base_layer.weight += delta
        self.merged = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        if not self.merged:
            name = self.active_adapter
            result = result + self.lora_B[name](self.lora_A[name](x)) * self.scaling[name]
        return result


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.to_q = LoraLinear(nn.Linear(8, 8))
        self.to_v = LoraLinear(nn.Linear(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.to_q(x) * torch.sigmoid(self.to_v(x))


def build() -> nn.Module:
    model = Model()
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.fuse()  # pipe.fuse_lora() before compiling
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
