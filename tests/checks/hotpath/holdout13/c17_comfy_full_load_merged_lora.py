"""Clean: the same ComfyUI Wan blocks and LoRA, but the model is fully loaded (normal-vram path), so `ModelPatcher.patch_weight_to_device` merges each LoRA into its weight once before sampling and no `LowVramPatch` is left in `weight_function`; the repeated blocks compile once. From Comfy-Org/ComfyUI#9972."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import CastWeightBiasOp, calculate_weight

LABEL = None
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/9972"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "blocks.*"

DIM = 8


class WanSelfAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = CastWeightBiasOp(DIM, DIM)
        self.v = CastWeightBiasOp(DIM, DIM)
        self.o = CastWeightBiasOp(DIM, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, v = self.q(x), self.v(x)
        attn = torch.softmax(q @ q.transpose(-1, -2) / DIM**0.5, dim=-1)
        return self.o(attn @ v)


class WanAttentionBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM)
        self.self_attn = WanSelfAttention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.self_attn(self.norm1(x))


class WanModel(nn.Module):
    def __init__(self, depth: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(WanAttentionBlock() for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def build() -> nn.Module:
    model = WanModel().eval()
    # ModelPatcher.load(full): every patched weight is merged in place, keyed by its state-dict name
    g = torch.Generator().manual_seed(1)
    patches: dict[str, list] = {}
    for name, module in model.named_modules():
        if isinstance(module, CastWeightBiasOp) and name.endswith(("q", "v")):
            key = f"diffusion_model.{name}.weight"
            patches[key] = [(0.8, torch.randn(DIM, 2, generator=g) * 0.1, torch.randn(2, DIM, generator=g) * 0.1)]
            with torch.no_grad():
                module.weight.copy_(calculate_weight(patches[key], module.weight, key))
    return model


def step(model: nn.Module, i: int) -> None:
    # one sampling step of KSampler
    with torch.no_grad():
        model(torch.randn(1, 4, DIM))
