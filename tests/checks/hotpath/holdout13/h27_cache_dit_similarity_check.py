"""Hazard: a DBCache/First-Block-Cache style transformer decides on every denoising step whether to reuse the cached residual by comparing the first block's residual with the previous one (`diff.item() < threshold` inside a compile-disabled helper), so each compiled forward breaks at the cache decision and resumes in a second frame. From vipshop/cache-dit#76 ([torch.compile] potential non-negligible slowdowns from the introduction of graph breaks)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import CacheContext

LABEL = "item-branch"
SOURCE = "https://github.com/vipshop/cache-dit/issues/76"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 2}

DIM = 8


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.mlp(self.norm(hidden_states) * (1 + temb))


class CachedTransformer(nn.Module):
    """The patched transformer forward: Fn compute blocks, cache check, then the remaining blocks or the cached residual."""

    def __init__(self, depth: int = 4) -> None:
        super().__init__()
        self.time_embed = nn.Linear(1, DIM)
        self.transformer_blocks = nn.ModuleList(Block() for _ in range(depth))
        self.cache_context = CacheContext(residual_diff_threshold=0.05)

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        temb = self.time_embed(timestep.view(-1, 1, 1))
        original = hidden_states
        hidden_states = self.transformer_blocks[0](hidden_states, temb)
        first_residual = hidden_states - original
        can_use_cache = self.cache_context.get_can_use_cache(first_residual)
        if can_use_cache:
            hidden_states = hidden_states + self.cache_context.buffers["hidden_states_residual"]
        else:
            start = hidden_states
            for block in self.transformer_blocks[1:]:
                hidden_states = block(hidden_states, temb)
            self.cache_context.buffers["hidden_states_residual"] = hidden_states - start
        self.cache_context.buffers["first_hidden_states_residual"] = first_residual
        return hidden_states


def build() -> nn.Module:
    return CachedTransformer().eval()


def step(model: nn.Module, i: int) -> None:
    # one denoising step of the pipeline loop; the latents drift a little from step to step
    g = torch.Generator().manual_seed(0)
    latents = torch.randn(1, 4, DIM, generator=g) + 0.01 * i
    with torch.no_grad():
        model(latents, torch.tensor([1000.0 - 125.0 * i]))
