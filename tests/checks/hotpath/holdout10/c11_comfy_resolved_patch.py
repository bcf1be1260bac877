"""Clean: the same per-block compiled Wan model with LoRA patches on its linear layers, but the patcher resolves each patch's LoRA tensors when it patches the model (no state-dict key string looked up in the forward), so all blocks share one compiled forward. Look-alike of kijai/ComfyUI-KJNodes#446."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout10._helpers_b import ResolvedPatch, cast_bias_weight

LABEL = None
SOURCE = "https://github.com/kijai/ComfyUI-KJNodes/issues/446"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "blocks.*"


class PatchedLinear(nn.Linear):
    """comfy.ops.disable_weight_init.Linear: weights go through the patcher's functions on every call."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.weight_function = []
        self.bias_function = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight, bias = cast_bias_weight(self)
        return torch.nn.functional.linear(x, weight, bias)


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(PatchedLinear(dim, dim), nn.GELU(approximate="tanh"), PatchedLinear(dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.ffn(self.norm(x))


class WanModel(nn.Module):
    def __init__(self, depth: int = 4, dim: int = 8) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(WanAttentionBlock(dim) for _ in range(depth))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def patch_model(model: WanModel, lora: dict) -> None:
    """ModelPatcher.load: attach a patch per patched weight, its LoRA tensors resolved from the key here, once."""
    for name, module in model.named_modules():
        if isinstance(module, PatchedLinear):
            for param in ("weight", "bias"):
                key = f"diffusion_model.{name}.{param}"
                for strength, down, up in lora.get(key, []):
                    getattr(module, f"{param}_function").append(ResolvedPatch(down, up, strength))


def build() -> nn.Module:
    model = WanModel()
    lora = {}
    for n in range(4):
        for param in ("weight", "bias"):
            lora[f"diffusion_model.blocks.{n}.ffn.0.{param}"] = [(0.8, torch.randn(2, 8) * 0.01, torch.randn(8, 2) * 0.01)]
    patch_model(model, lora)
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(2, 8))
