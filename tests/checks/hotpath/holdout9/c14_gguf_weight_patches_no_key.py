"""Clean: the same regionally compiled GGUF transformer blocks with LoRA patches riding on each quantized weight, but (as after the fix) only the patch tensors and strength travel on the parameter; the per-block key string stays in the patcher outside the compiled block, so all blocks share one compiled graph. From kijai/ComfyUI-KJNodes#363 (Qwen-Image recompile limit with the Lightning LoRA)."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

LABEL = None
SOURCE = "https://github.com/kijai/ComfyUI-KJNodes/issues/363"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "transformer_blocks.*"

PATCH_KEYS: dict = {}


def calculate_weight(patches: list, weight: torch.Tensor) -> torch.Tensor:
    """comfy.lora.calculate_weight: applies each (strength, (down, up)) patch; the key was resolved by the patcher."""
    for strength, (down, up) in patches:
        weight = weight + strength * (up @ down)
    return weight


class GGMLLinear(nn.Linear):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight
        for patch_list in getattr(self.weight, "patches", []):
            weight = calculate_weight(patch_list, weight)
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
        PATCH_KEYS[key] = block.attn.to_k.weight  # bookkeeping stays with the patcher, outside compile
        block.attn.to_k.weight.patches = [[(1.0, (torch.randn(2, 8) * 0.01, torch.randn(8, 2) * 0.01))]]
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 8))
