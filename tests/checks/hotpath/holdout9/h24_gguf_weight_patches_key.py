"""Hazard: ComfyUI-GGUF attaches the LoRA patches to each quantized weight as `weight.patches = [(patch_list, key)]`, and the dequantizing Linear applies them by key inside the compiled transformer block; every block carries a different key string, so regional compilation of the shared block forward fails `self._modules['to_k']._parameters['weight'].patches[0][1] == 'diffusion_model.transformer_blocks.3.attn.to_k.weight'` block after block until recompile_limit. From kijai/ComfyUI-KJNodes#363 (Qwen-Image recompile limit with the Lightning LoRA)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = "per-instance"
SOURCE = "https://github.com/kijai/ComfyUI-KJNodes/issues/363"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "transformer_blocks.*"


def calculate_weight(patches: list, weight: torch.Tensor, key: str) -> torch.Tensor:
    """comfy.lora.calculate_weight: applies each (strength, (down, up)) patch registered under `key`."""
    for strength, (down, up) in patches:
        if key.endswith(".weight"):
            weight = weight + strength * (up @ down)
    return weight


class GGMLLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for patch_list, key in getattr(self.weight, "patches", []):
            weight = calculate_weight(patch_list, weight, key)
        return F.linear(x, weight, self.bias)


class Attention(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.to_q = GGMLLinear(dim, dim)
        self.to_k = GGMLLinear(dim, dim)
        self.to_v = GGMLLinear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v


class QwenImageTransformerBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = Attention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(x)


class QwenImageTransformer2DModel(nn.Module):
    def __init__(self, depth: int = 4) -> None:
        super().__init__()
        self.transformer_blocks = nn.ModuleList([QwenImageTransformerBlock() for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.transformer_blocks:
            x = block(x)
        return x


def build() -> nn.Module:
    model = QwenImageTransformer2DModel()
    # LoraLoaderModelOnly -> GGUFModelPatcher.patch_weight_to_device: patches ride on the parameter itself
    for i, block in enumerate(model.transformer_blocks):
        key = f"diffusion_model.transformer_blocks.{i}.attn.to_k.weight"
        block.attn.to_k.weight.patches = [([(1.0, (torch.randn(2, 8) * 0.01, torch.randn(8, 2) * 0.01))], key)]
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
