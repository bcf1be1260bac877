"""Hazard: TeaCache is applied to a diffusion transformer as a diffusers hook that replaces `forward`, and the whole
transformer is compiled; the hook's skip decision (`_should_compute`, which reads `.item()` of a relative-L1 distance
and bumps a step counter in the hook's state) is `@torch.compiler.disable`, so every compiled forward graph-breaks
there and the resumed frame branches on the returned Python bool. From huggingface/diffusers#12652 (Implement
TeaCache: "the decision helpers now carry `@torch.compiler.disable` ... teacache contributes exactly one break")."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_b import HookRegistry, TeaCacheConfig, apply_teacache

LABEL = "graph-break"
SOURCE = "https://github.com/huggingface/diffusers/pull/12652"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 2}


class AdaLayerNormZero(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.linear = nn.Linear(dim, 2 * dim)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        shift, scale = self.linear(torch.nn.functional.silu(temb)).unsqueeze(1).chunk(2, dim=-1)
        return self.norm(x) * (1 + scale) + shift


class DiTBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm1 = AdaLayerNormZero(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        norm_hidden_states = self.norm1(hidden_states, temb)
        hidden_states = hidden_states + self.attn(norm_hidden_states, norm_hidden_states, norm_hidden_states)[0]
        return hidden_states + self.ff(hidden_states)


class DiTTransformer2DModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.transformer_blocks = nn.ModuleList([DiTBlock() for _ in range(2)])
        self.proj_out = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, temb)
        return self.proj_out(hidden_states)


def build() -> nn.Module:
    transformer = DiTTransformer2DModel()
    apply_teacache(transformer, TeaCacheConfig(rel_l1_thresh=0.2, num_inference_steps=4))
    return transformer


def step(model: nn.Module, i: int) -> None:
    """One pipeline call: 4 denoising steps through the (hooked, compiled) transformer."""
    latents = torch.randn(1, 4, 8)
    timesteps = torch.linspace(1.0, 0.0, 4)
    with torch.no_grad():
        for t in timesteps:
            temb = t.expand(1, 8)
            noise_pred = model(latents, temb)
            latents = latents - 0.25 * noise_pred
    HookRegistry.check_if_exists_or_initialize(model).reset_stateful_hooks()
