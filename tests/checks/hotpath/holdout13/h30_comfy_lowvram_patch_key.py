"""Hazard: a ComfyUI model loaded in lowvram mode with a LoRA applies the LoRA lazily through a `LowVramPatch` in each linear's `weight_function`; compiling the repeated blocks inlines `LowVramPatch.__call__`, which looks its patches up by its string `self.key`, so every block is guarded on its own key and recompiles until the recompile limit is hit. From Comfy-Org/ComfyUI#9972 (Torch hitting recompile limit: `__call__` (comfy/model_patcher.py), last reason: self.key == 'diffusion_model.blocks.6.self_attn.v.weight')."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import CastWeightBiasOp, LowVramPatch

LABEL = "per-instance"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/9972"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
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
    # ModelPatcher.load(lowvram): every patched weight gets a LowVramPatch keyed by its state-dict name
    g = torch.Generator().manual_seed(1)
    patches: dict[str, list] = {}
    for name, module in model.named_modules():
        if isinstance(module, CastWeightBiasOp) and name.endswith(("q", "v")):
            key = f"diffusion_model.{name}.weight"
            patches[key] = [(0.8, torch.randn(DIM, 2, generator=g) * 0.1, torch.randn(2, DIM, generator=g) * 0.1)]
            module.weight_function.append(LowVramPatch(key, patches))
    return model


def step(model: nn.Module, i: int) -> None:
    # one sampling step of KSampler
    with torch.no_grad():
        model(torch.randn(1, 4, DIM))
