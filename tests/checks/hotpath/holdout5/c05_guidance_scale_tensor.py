"""Clean: the sampler decides classifier-free guidance once outside the model and passes the swept guidance scale as a 0-d tensor, so the compiled denoiser sees no Python float. From pytorch/pytorch#149405 (recompiles due to Python float object)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/149405"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class CFGDenoiser(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.unet = nn.Linear(8, 8)
        self.cond_proj = nn.Linear(8, 8)

    def forward(self, latents: torch.Tensor, cond: torch.Tensor, uncond: torch.Tensor, guidance_scale: torch.Tensor) -> torch.Tensor:
        x_in = torch.cat([latents] * 2)
        c_in = torch.cat([uncond, cond])
        noise_uncond, noise_text = (self.unet(x_in) + self.cond_proj(c_in)).chunk(2)
        return noise_uncond + guidance_scale * (noise_text - noise_uncond)


def build() -> nn.Module:
    return CFGDenoiser()


def step(model: nn.Module, i: int) -> None:
    guidance_scale = (1.5, 2.5, 3.5, 5.0, 7.5, 9.0, 2.0, 4.0)[i]
    with torch.no_grad():
        model(torch.randn(2, 8), torch.randn(2, 8), torch.zeros(2, 8), torch.tensor(guidance_scale))
