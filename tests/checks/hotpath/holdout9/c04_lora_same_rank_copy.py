"""Clean: the same LoRA-patched block as h07, but every LoRA the workflow loads has the same rank and the loader copies the new matrices into the existing adapter parameters in place (`param.data.copy_`) instead of replacing them, so the compiled block is reused. Look-alike of Comfy-Org/ComfyUI#9289."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/9289"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class LoRALinear(nn.Module):
    def __init__(self, dim: int = 8, rank: int = 4) -> None:
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_down = nn.Parameter(torch.zeros(rank, dim))
        self.lora_up = nn.Parameter(torch.zeros(dim, rank))
        self.scale = 1.0

    @torch.no_grad()
    def load_lora(self, down: torch.Tensor, up: torch.Tensor) -> None:
        """Load into the preallocated adapter slot: same shapes, same Parameter objects."""
        self.lora_down.data.copy_(down)
        self.lora_up.data.copy_(up)

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


def step(model: nn.Module, i: int) -> None:
    for adapter in (model.img_mod, model.proj):
        adapter.load_lora(torch.randn(4, 8) * 0.01, torch.randn(8, 4) * 0.01)
    with torch.no_grad():
        model(torch.randn(2, 8))
