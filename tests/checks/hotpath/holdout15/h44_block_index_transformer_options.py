"""Hazard: a ComfyUI-style Wan transformer writes `block_index` (and `total_blocks`, `block_type`) into the `transformer_options` dict before calling each block, and the block's forward reads `transformer_options["block_index"]` to look up its patch; with the blocks compiled one by one (as ComfyUI's block-wise compile nodes do), every block sees a different Python int in the shared code and gets its own graph. From Comfy-Org/ComfyUI#10845 (adds `block_index`, `total_blocks` and `block_type` to Wan's transformer_options; the reviewer asked for the block info to go back to plain ints, saying the torch.compile graph breaks on transformer_options should be largely mitigated by #11317)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/pull/10845"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "blocks.*"


class WanAttentionBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))

    def forward(self, x: torch.Tensor, e: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        idx = transformer_options["block_index"]
        patch = transformer_options["patches"].get(idx)  # per-block patch table, keyed by block index
        h = self.ffn(self.norm(x) * (1 + e))
        if patch is not None:
            h = h * patch
        return x + h


class WanModel(nn.Module):
    def __init__(self, dim: int = 8, n_blocks: int = 4) -> None:
        super().__init__()
        self.time_embedding = nn.Linear(1, dim)
        self.blocks = nn.ModuleList(WanAttentionBlock(dim) for _ in range(n_blocks))

    def forward(self, x: torch.Tensor, timestep: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        e = self.time_embedding(timestep[:, None])[:, None, :]
        transformer_options["total_blocks"] = len(self.blocks)
        transformer_options["block_type"] = "double"
        for i, block in enumerate(self.blocks):
            transformer_options["block_index"] = i
            x = block(x, e, transformer_options=transformer_options)
        return x


def build() -> nn.Module:
    return WanModel()


_x = torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(0))


def step(model: nn.Module, i: int) -> None:
    sigma = torch.tensor([1.0 - i / 8])
    options = {"patches": {2: 0.5}}
    with torch.no_grad():
        model(_x, sigma, transformer_options=options)
