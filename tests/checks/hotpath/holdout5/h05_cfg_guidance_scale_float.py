"""Hazard: the sampling loop passes `guidance_scale` as a Python float into the compiled classifier-free-guidance denoiser and sweeps it, so Dynamo guards `L['guidance_scale'] == 1.5` and recompiles at the first new value, after which the float is treated as dynamic (and `do_classifier_free_guidance = guidance_scale > 1.0` picks a branch). From pytorch/pytorch#149405 (recompiles due to Python float object)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "float"
SOURCE = "https://github.com/pytorch/pytorch/issues/149405"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class CFGDenoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.unet = nn.Linear(8, 8)
        self.cond_proj = nn.Linear(8, 8)

    def forward(self, latents: torch.Tensor, cond: torch.Tensor, uncond: torch.Tensor, guidance_scale: float) -> torch.Tensor:
        do_classifier_free_guidance = guidance_scale > 1.0
        if do_classifier_free_guidance:
            x_in = torch.cat([latents] * 2)
            c_in = torch.cat([uncond, cond])
            noise = self.unet(x_in) + self.cond_proj(c_in)
            noise_uncond, noise_text = noise.chunk(2)
            return noise_uncond + guidance_scale * (noise_text - noise_uncond)
        return self.unet(latents) + self.cond_proj(cond)


def build() -> nn.Module:
    return CFGDenoiser()


def step(model: nn.Module, i: int) -> None:
    guidance_scale = (1.0, 1.5, 2.5, 3.5, 5.0, 7.5, 1.0, 9.0)[i]  # a guidance sweep, one image per value
    with torch.no_grad():
        model(torch.randn(2, 8), torch.randn(2, 8), torch.zeros(2, 8), guidance_scale)
