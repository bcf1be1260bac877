"""Hazard: with KJNodes' Flux compile node only the double blocks are compiled, each separately, and every block's projection carries a ComfyUI `LowVramPatch` in `weight_function` whose `__call__` looks its patches up by `self.key`; each block's key string differs, so the shared block forward fails `L['self'].key == 'diffusion_model.double_blocks.0.img_attn.proj.weight'` block after block until cache_size_limit. From kijai/ComfyUI-KJNodes#131 (still getting repatch notice after lora change)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from tests.checks.hotpath.holdout9._helpers_b import ModelPatcher

LABEL = "per-instance"
SOURCE = "https://github.com/kijai/ComfyUI-KJNodes/issues/131"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
REGION = "double_blocks.*"


class CastLinear(nn.Linear):
    """comfy.ops Linear: runs the weight through `weight_function` patches when casting."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.weight_function: list = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for f in self.weight_function:
            weight = f(weight)
        return F.linear(x, weight, self.bias)


class SelfAttention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = CastLinear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.proj(torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v)


class DoubleStreamBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.img_attn = SelfAttention()
        self.txt_attn = SelfAttention()

    def forward(self, img: torch.Tensor, txt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return img + self.img_attn(img), txt + self.txt_attn(txt)


class Flux(nn.Module):
    def __init__(self, depth: int = 3) -> None:
        super().__init__()
        self.double_blocks = nn.ModuleList([DoubleStreamBlock() for _ in range(depth)])

    def forward(self, img: torch.Tensor, txt: torch.Tensor) -> torch.Tensor:
        for block in self.double_blocks:
            img, txt = block(img, txt)
        return img


def build() -> nn.Module:
    model = Flux()
    patcher = ModelPatcher(model)
    for i in range(len(model.double_blocks)):
        patcher.add_patches(f"double_blocks.{i}.img_attn.proj.weight", torch.randn(2, 8) * 0.01, torch.randn(8, 2) * 0.01, 1.0)
    patcher.load()  # LoRA loaded once, in lowvram mode: weight_function = [LowVramPatch(key, patches)]
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 8), torch.randn(1, 3, 8))
