"""Hazard: ComfyUI attaches a LoRA to a WAN-style model lazily (lowvram): every patched Linear gets a `weight_function` list holding a LowVramPatch whose `key` is that weight's state-dict name; with the transformer blocks compiled one by one (shared code), each block fails the guard on its predecessor's key string and recompiles. From Comfy-Org/ComfyUI#14536 (TorchCompile nodes with WAN: recompiles on `weight_function[0].key == 'diffusion_model.blocks.6.ffn.0.weight'`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout12._helpers_b import ComfyLinear, ModelPatcher

LABEL = "library-object"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/14536"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "diffusion_model.blocks.*"


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(ComfyLinear(dim, 2 * dim), nn.GELU(approximate="tanh"), ComfyLinear(2 * dim, dim))

    def forward(self, x: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        return x + self.ffn(self.norm(x) * (1 + e))


class WanModel(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 4) -> None:
        super().__init__()
        self.time_embedding = nn.Linear(1, dim)
        self.blocks = nn.ModuleList(WanAttentionBlock(dim) for _ in range(num_layers))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        e = self.time_embedding(t[:, None, None])
        for block in self.blocks:
            x = block(x, e)
        return self.head(x)


class BaseModel(nn.Module):
    """comfy.model_base.BaseModel: owns the diffusion model."""

    def __init__(self) -> None:
        super().__init__()
        self.diffusion_model = WanModel()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.diffusion_model(x, t)


def build() -> nn.Module:
    model = BaseModel()
    patcher = ModelPatcher(model, prefix="")
    lora = {}
    for name, module in model.named_modules():
        if isinstance(module, ComfyLinear):
            lora[f"{name}.weight"] = (torch.randn(module.out_features, 2) * 0.01, torch.randn(2, module.in_features) * 0.01)
    patcher.add_patches(lora, strength=1.0)  # LoraLoaderModelOnly
    patcher.patch_lowvram()  # not enough VRAM to merge: patches are applied on the fly
    return model


def step(model: nn.Module, i: int) -> None:
    """One KSampler step (4 steps per prompt, two prompts)."""
    sigmas = torch.linspace(1.0, 0.0, 5)
    with torch.no_grad():
        model(torch.randn(1, 6, 8), sigmas[i % 4].reshape(1))
