"""Hazard: diffusers' First Block Cache hooks the transformer blocks; the head-block hook decides per denoising step whether to skip the remaining blocks in a `@torch.compiler.disable` helper (a `.item()` on the residual change) and stores the decision as a Python bool in shared hook state that every other block's hook branches on, so the compiled transformer breaks its graph at the decision, and the hooks' shared `new_forward` closures (now frames of their own) recompile on the head-state checks, the hook kind and the flipping bool. From unslothai/unsloth#6703 (First-Block-Cache with compile: the cache's per-step decision is a `torch.compiler.disable` graph break)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout11._helpers_b import apply_first_block_cache

LABEL = "hook"
SOURCE = "https://github.com/unslothai/unsloth/pull/6703"
OBSERVED = {"compiles_over_8_steps": 7, "graph_breaks": 3}


class FluxTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        return hidden_states + 0.1 * self.ff(self.norm(hidden_states) + temb)


class FluxTransformer2DModel(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 4) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(4, dim)
        self.time_embed = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(FluxTransformerBlock(dim) for _ in range(depth))
        self.proj_out = nn.Linear(dim, 4)

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        hidden_states = self.x_embedder(hidden_states)
        temb = self.time_embed(timestep.reshape(-1, 1, 1))
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, temb)
        return self.proj_out(hidden_states)


def build() -> nn.Module:
    transformer = FluxTransformer2DModel()
    transformer.cache_state = apply_first_block_cache(transformer, threshold=0.05)  # transformer.enable_cache(FirstBlockCacheConfig(...))
    return transformer


_LATENTS: list[torch.Tensor] = []


def step(model: nn.Module, i: int) -> None:
    # FluxPipeline denoising loop: flow-matching Euler steps, timesteps 1.0 -> 0.125
    if i == 0:
        _LATENTS[:] = [torch.randn(1, 16, 4, generator=torch.Generator().manual_seed(0))]
    latents = _LATENTS[0]
    t = torch.tensor([1.0 - i / 8])
    with torch.no_grad():
        noise_pred = model(latents, t)
    _LATENTS[0] = latents - noise_pred / 8 * (1 if i < 3 else 0.01)
