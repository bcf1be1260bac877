"""Hazard: AuraFlow's patch embedding picks its positional-embedding window from `pos_embed_max_size` and the latent's height/width as Python ints (`pe_selection_index_based_on_dim`), so every new resolution the pipeline is called with fails the shape guard on `hidden_states.size()[3] // patch_size` and recompiles. From pytorch/pytorch#150702 (diffusers pipeline transformer recompilations due to different width/height)."""
from __future__ import annotations

import math

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/pytorch/pytorch/issues/150702"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class AuraFlowPatchEmbed(nn.Module):
    def __init__(self, patch_size: int = 2, in_channels: int = 2, embed_dim: int = 8, pos_embed_max_size: int = 64) -> None:
        super().__init__()
        self.patch_size = patch_size
        self.pos_embed_max_size = pos_embed_max_size
        self.proj = nn.Linear(patch_size * patch_size * in_channels, embed_dim)
        self.pos_embed = nn.Parameter(torch.randn(1, pos_embed_max_size, embed_dim) * 0.1)

    def pe_selection_index_based_on_dim(self, h: int, w: int) -> torch.Tensor:
        h_p, w_p = h // self.patch_size, w // self.patch_size
        h_max, w_max = int(self.pos_embed_max_size**0.5), int(self.pos_embed_max_size**0.5)
        starth, startw = h_max // 2 - h_p // 2, w_max // 2 - w_p // 2
        rows = torch.arange(starth, starth + h_p)
        cols = torch.arange(startw, startw + w_p)
        return (rows[:, None] * w_max + cols[None, :]).flatten()

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        b, c, h, w = latent.shape
        p = self.patch_size
        x = latent.view(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).flatten(-3).flatten(1, 2)
        x = self.proj(x)
        idx = self.pe_selection_index_based_on_dim(h, w)
        return x + self.pos_embed[:, idx]


class AuraFlowTransformer2DModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pos_embed = AuraFlowPatchEmbed()
        self.block = nn.Linear(8, 8)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.block(self.pos_embed(hidden_states))


def build() -> nn.Module:
    return AuraFlowTransformer2DModel()


def step(model: nn.Module, i: int) -> None:
    # the user serves requests at several resolutions (latent = image // 8)
    h, w = [(8, 8), (8, 12), (12, 8), (8, 8), (16, 8), (8, 16), (12, 12), (8, 8)][i]
    with torch.no_grad():
        model(torch.randn(1, 2, h, w))
