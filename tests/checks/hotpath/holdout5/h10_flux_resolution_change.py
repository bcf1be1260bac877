"""Hazard: the pipeline packs latents for whatever height/width the user asks for, so the compiled transformer sees a new token count (and the Python ints derived from it) at a resolution change: the first change recompiles, after which the token count is made dynamic. From huggingface/diffusers#11360 (investigating FluxPipeline for recompilations on resolution changes)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/diffusers/issues/11360"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}

HEIGHT_WIDTH = [(64, 64), (96, 48), (128, 128)]
VAE_SCALE_FACTOR = 8


class TinyFluxTransformer(nn.Module):
    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(channels * 4, 8)
        self.proj_out = nn.Linear(8, channels * 4)

    def forward(self, hidden_states: torch.Tensor, img_ids: torch.Tensor) -> torch.Tensor:
        h = self.x_embedder(hidden_states)
        pos = img_ids[..., 1:2] * 0.01 + img_ids[..., 2:3] * 0.001  # stands for the RoPE over image ids
        return self.proj_out(torch.nn.functional.silu(h + pos))


def pack_latents(latents: torch.Tensor, batch_size: int, num_channels: int, height: int, width: int) -> torch.Tensor:
    latents = latents.view(batch_size, num_channels, height // 2, 2, width // 2, 2)
    latents = latents.permute(0, 2, 4, 1, 3, 5)
    return latents.reshape(batch_size, (height // 2) * (width // 2), num_channels * 4)


def prepare_latent_image_ids(height: int, width: int) -> torch.Tensor:
    ids = torch.zeros(height, width, 3)
    ids[..., 1] = ids[..., 1] + torch.arange(height)[:, None]
    ids[..., 2] = ids[..., 2] + torch.arange(width)[None, :]
    return ids.reshape(height * width, 3)


def build() -> nn.Module:
    return TinyFluxTransformer()


def step(model: nn.Module, i: int) -> None:
    height, width = HEIGHT_WIDTH[i % len(HEIGHT_WIDTH)]
    h = 2 * (int(height) // (VAE_SCALE_FACTOR * 2))
    w = 2 * (int(width) // (VAE_SCALE_FACTOR * 2))
    latents = pack_latents(torch.randn(1, 4, h, w), 1, 4, h, w)
    with torch.no_grad():
        model(latents, prepare_latent_image_ids(h // 2, w // 2))
