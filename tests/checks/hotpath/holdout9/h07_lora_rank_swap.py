"""Hazard: an image transformer is compiled once and the workflow then loads LoRAs of different ranks into its adapter slots between generations, replacing the adapter parameters; the guards on the parameters' sizes fail (`size mismatch at index 1 ... Guard failed on a parameter`), so every new LoRA recompiles until the recompile limit is hit. From Comfy-Org/ComfyUI#9289 (recompilation limit reached for Qwen-Image with the Qwen-lightning LoRA)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/9289"
OBSERVED = {"compiles_over_8_steps": 5, "graph_breaks": 0}


class LoRALinear(nn.Module):
    def __init__(self, dim: int = 8, rank: int = 2) -> None:
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_down = nn.Parameter(torch.zeros(rank, dim))
        self.lora_up = nn.Parameter(torch.zeros(dim, rank))
        self.scale = 1.0

    def load_lora(self, down: torch.Tensor, up: torch.Tensor) -> None:
        """What a LoRA loader does: swap in the new adapter matrices (their rank is the LoRA's)."""
        self.lora_down = nn.Parameter(down)
        self.lora_up = nn.Parameter(up)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_down.t() @ self.lora_up.t()) * self.scale


class ImageTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.img_mod = LoRALinear(dim)
        self.proj = LoRALinear(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(torch.nn.functional.gelu(self.img_mod(x)))


def build() -> nn.Module:
    return ImageTransformerBlock()


LORA_RANKS = [2, 2, 4, 4, 8, 16, 4, 32]  # the user switches between LoRA files from the UI


def step(model: nn.Module, i: int) -> None:
    rank = LORA_RANKS[i]
    for adapter in (model.img_mod, model.proj):
        adapter.load_lora(torch.randn(rank, 8) * 0.01, torch.randn(8, rank) * 0.01)
    with torch.no_grad():
        model(torch.randn(2, 8))
