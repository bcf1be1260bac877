"""Hazard: PEFT's LoRA Linear multiplies by the per-adapter `self.scaling[adapter]`, a Python float (lora_alpha / r), inside the compiled forward; hot-swapping in adapters with other alpha values without first converting the scalings to tensors rewrites the float, and the compiled model recompiles for the new values. From huggingface/diffusers#11993 (LoRA hotswap docs: the scaling factor has to be converted from floats to tensors to hotswap without recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/huggingface/diffusers/pull/11993"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class LoraLinear(nn.Module):
    def __init__(self, base_layer: nn.Linear, r: int = 2, lora_alpha: int = 1, adapter_name: str = "default") -> None:
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling = {adapter_name: lora_alpha / r}
        self.active_adapters = [adapter_name]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result = self.base_layer(x)
        for active_adapter in self.active_adapters:
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            scaling = self.scaling[active_adapter]
            result = result + lora_B(lora_A(x)) * scaling
        return result


class OPTAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q_proj = LoraLinear(nn.Linear(dim, dim))
        self.v_proj = LoraLinear(nn.Linear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.q_proj(x) @ x.transpose(-1, -2), dim=-1) @ self.v_proj(x)


def hotswap_adapter(model: nn.Module, state_dict: dict, lora_alpha: int, r: int = 2, adapter_name: str = "default") -> None:
    """peft.utils.hotswap.hotswap_adapter: copy the new weights in place and overwrite the scaling."""
    for name, module in model.named_modules():
        if isinstance(module, LoraLinear):
            module.lora_A[adapter_name].weight.data.copy_(state_dict[f"{name}.lora_A"])
            module.lora_B[adapter_name].weight.data.copy_(state_dict[f"{name}.lora_B"])
            module.scaling[adapter_name] = lora_alpha / r


def build() -> nn.Module:
    return OPTAttention()


def step(model: nn.Module, i: int) -> None:
    # a serving loop that swaps in the adapter each request asks for
    lora_alpha = [1, 1, 2, 4, 2, 1, 4, 2][i]
    sd = {}
    for name in ("q_proj", "v_proj"):
        sd[f"{name}.lora_A"] = torch.randn(2, 8) * 0.01
        sd[f"{name}.lora_B"] = torch.randn(8, 2) * 0.01
    hotswap_adapter(model, sd, lora_alpha)
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
