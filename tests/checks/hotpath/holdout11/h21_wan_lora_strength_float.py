"""Hazard: the video wrapper keeps unmerged LoRA diffs on each linear and its "Set LoRAs" node writes the user's LoRA strengths onto the layers as Python floats before each run, so the first new strength the user tries fails a guard on the float and recompiles the compiled transformer (on torch 2.13 the float is then traced as a symbol). From kijai/ComfyUI-WanVideoWrapper#1736 (changing LoRA weights causes torch recompile)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import WanLoraLinear, set_lora_params

LABEL = "library-object"
SOURCE = "https://github.com/kijai/ComfyUI-WanVideoWrapper/issues/1736"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.q = WanLoraLinear(dim, dim)
        self.o = WanLoraLinear(dim, dim)
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
        if isinstance(module, WanLoraLinear):
            _LORA[name] = (torch.randn(8, 4, generator=g) * 0.1, torch.randn(4, 8, generator=g) * 0.1)
    return model


def step(model: nn.Module, i: int) -> None:
    # the user re-queues the workflow, nudging the LoRA strength slider between runs
    strength = [1.0, 0.9, 0.8, 0.8, 0.7, 1.0, 0.6, 0.5][i]
    set_lora_params(model, _LORA, [strength])
    with torch.no_grad():
        model(torch.randn(2, 4, 8))
