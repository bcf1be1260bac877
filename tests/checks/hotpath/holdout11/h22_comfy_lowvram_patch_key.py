"""Hazard: with a LoRA loaded in low-VRAM mode, ComfyUI hangs a LowVramPatch on each patched linear that looks up its own weight key ("diffusion_model.blocks.N.self_attn.o.weight") in the patcher's dict; compiling the repeated blocks one by one, every block's distinct key string fails the previous block's guard and recompiles, up to the recompile limit on a real model. From Comfy-Org/ComfyUI#10377 (recompile_limit hit, last reason `...patches[0][1] == 'diffusion_model.blocks.6.self_attn.o.weight'`)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import ComfyLinear, ModelPatcher

LABEL = "per-instance"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/10377"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "blocks.*"


class SelfAttention(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.q = ComfyLinear(dim, dim)
        self.o = ComfyLinear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.q(x)
        attn = torch.softmax(q @ x.transpose(-1, -2) / 8**0.5, dim=-1)
        return self.o(attn @ x)


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.self_attn = SelfAttention(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.self_attn(self.norm1(x))


class WanModel(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(WanAttentionBlock(dim) for _ in range(depth))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def build() -> nn.Module:
    model = WanModel()
    patcher = ModelPatcher(model)
    g = torch.Generator().manual_seed(2)
    lora = {f"diffusion_model.blocks.{n}.self_attn.o.weight": (torch.randn(8, 4, generator=g) * 0.1, torch.randn(4, 8, generator=g) * 0.1) for n in range(4)}
    patcher.add_patches(lora, strength=1.0)
    patcher.load_lowvram()
    model.patcher = patcher  # type: ignore[attr-defined]  # kept alive with the model, as the ModelPatcher owns it
    return model


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 6, 8))
