"""Clean: hot-swapping adapters the compile-friendly way — `prepare_model_for_compiled_hotswap` turns each LoRA scaling into a tensor and the swap copies the new alpha/r into it in place, so the compiled model never sees a changed Python value. From huggingface/peft#2416 (the hotswap test it fixes) / huggingface/diffusers#9453."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/peft/pull/2416"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}

CHECKPOINTS = [(8, 8), (8, 4), (16, 32), (8, 8), (4, 2), (16, 16), (8, 24), (8, 8)]


class LoraLinear(nn.Module):
    def __init__(self, in_features: int, out_features: int, r: int = 8) -> None:
        super().__init__()
        self.base_layer = nn.Linear(in_features, out_features)
        self.lora_A = nn.ModuleDict({"default": nn.Linear(in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, out_features, bias=False)})
        self.scaling = {"default": 1.0}
        self.active_adapter = "default"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        lora_A = self.lora_A[self.active_adapter]
        lora_B = self.lora_B[self.active_adapter]
        return result + lora_B(lora_A(x)) * self.scaling[self.active_adapter]


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = LoraLinear(8, 8)
        self.v_proj = LoraLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.q_proj(x) + self.v_proj(x)


def prepare_model_for_compiled_hotswap(model: nn.Module) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            module.scaling = {k: torch.tensor(v) for k, v in module.scaling.items()}


def hotswap_adapter(model: nn.Module, rank: int, alpha: int) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            with torch.no_grad():
                for p in module.lora_A["default"].parameters():
                    p.normal_()
                module.scaling["default"].fill_(alpha / rank)


def build() -> nn.Module:
    model = Model()
    prepare_model_for_compiled_hotswap(model)
    return model


def step(model: nn.Module, i: int) -> None:
    hotswap_adapter(model, *CHECKPOINTS[i])
    with torch.no_grad():
        model(torch.randn(2, 8))
