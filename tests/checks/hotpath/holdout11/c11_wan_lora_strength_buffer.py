"""Clean: the same runtime-LoRA video transformer, but the "Set LoRAs" node copies the user's strengths into a buffer on each layer in place, so changing the strength between runs changes tensor data only and the compiled transformer is reused. Look-alike of h21 (kijai/ComfyUI-WanVideoWrapper#1736)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import WanLoraLinearTensorStrength, set_lora_strengths_inplace

LABEL = None
SOURCE = "https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/1736"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q = WanLoraLinearTensorStrength(dim, dim)
        self.o = WanLoraLinearTensorStrength(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.o(torch.tanh(self.q(self.norm(x))))


class WanModel(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 2) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(WanAttentionBlock(dim) for _ in range(depth))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


_LORA: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}


def build() -> nn.Module:
    model = WanModel()
    _LORA.clear()
    g = torch.Generator().manual_seed(1)
    for name, module in model.named_modules():
        if isinstance(module, WanLoraLinearTensorStrength):
            _LORA[name] = (torch.randn(8, 4, generator=g) * 0.1, torch.randn(4, 8, generator=g) * 0.1)
    set_lora_strengths_inplace(model, _LORA, [1.0])  # LoRA attached once, before the first compiled run
    return model


def step(model: nn.Module, i: int) -> None:
    strength = [1.0, 0.9, 0.8, 0.8, 0.7, 1.0, 0.6, 0.5][i]
    set_lora_strengths_inplace(model, _LORA, [strength])
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
