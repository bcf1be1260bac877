"""Hazard: the LoRA forward takes a fast path `if scaling == 1` and the scaling is a plain float that hot-swapping adapters rewrites (alpha/r of 1.0, 0.5, 2.0 ...), so the compiled model recompiles on each new scaling value. From huggingface/peft#2416 (FIX Revert optimization for LoRA scaling == 1: it "leads to recompilation when the model is compiled")."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/huggingface/peft/pull/2416"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

# (rank, alpha) of the adapters a user cycles through with hotswap
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
        scaling = self.scaling[self.active_adapter]
        if scaling == 1:  # skip the multiply for the common alpha == r case
            return result + lora_B(lora_A(x))
        return result + lora_B(lora_A(x)) * scaling


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = LoraLinear(8, 8)
        self.v_proj = LoraLinear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.q_proj(x) + self.v_proj(x)


def hotswap_adapter(model: nn.Module, rank: int, alpha: int) -> None:
    for module in model.modules():
        if isinstance(module, LoraLinear):
            with torch.no_grad():
                for p in module.lora_A["default"].parameters():
                    p.normal_()
            module.scaling["default"] = alpha / rank


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    hotswap_adapter(model, *CHECKPOINTS[i])
    with torch.no_grad():
        model(torch.randn(2, 8))
