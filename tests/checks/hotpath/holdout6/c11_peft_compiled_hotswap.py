"""Clean: the same LoRA transformer prepared with `prepare_model_for_compiled_hotswap` before compiling; each new
LoRA is hot-swapped in by copying weights into the existing parameters and `fill_`-ing the scaling, which is now a
tensor, so nothing the graph guards on changes and it compiles once. From huggingface/diffusers#9453 (LoRA hot-swapping
for compiled models)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import (
    LoraLinear,
    hotswap_adapter_from_state_dict,
    prepare_model_for_compiled_hotswap,
)

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/pull/9453"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class SDBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_q = LoraLinear(nn.Linear(dim, dim))
        self.to_v = LoraLinear(nn.Linear(dim, dim))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q = self.to_q(hidden_states)
        v = self.to_v(hidden_states)
        return hidden_states + self.proj_out(torch.softmax(q, dim=-1) * v)


class UNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([SDBlock() for _ in range(2)])

    def forward(self, sample: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            sample = block(sample)
        return sample


def build() -> nn.Module:
    unet = UNet()
    prepare_model_for_compiled_hotswap(unet)  # before compiling, as the diffusers docs require
    return unet


def _lora_checkpoint(model: nn.Module, seed: int) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    g = torch.Generator().manual_seed(seed)
    state, scalings = {}, {}
    for name, module in model.named_modules():
        if isinstance(module, LoraLinear):
            state[f"{name}.lora_A.weight"] = torch.randn(module.lora_A["default"].weight.shape, generator=g)
            state[f"{name}.lora_B.weight"] = torch.randn(module.lora_B["default"].weight.shape, generator=g)
            scalings[name] = [0.5, 1.0, 0.5, 1.0][seed % 4]
    return state, scalings


def step(model: nn.Module, i: int) -> None:
    state, scalings = _lora_checkpoint(model, i)
    hotswap_adapter_from_state_dict(model, state, scalings)  # pipe.load_lora_weights(..., hotswap=True)
    latents = torch.randn(1, 4, 8)
    with torch.no_grad():
        for _ in range(2):
            latents = latents - 0.1 * model(latents)
