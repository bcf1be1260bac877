"""Hazard: a Flux pipeline is warmed up with `num_images_per_prompt=1` and then asked for 2 or 4 images; the compiled transformer's latents, text embeddings and guidance tensor change batch size from 1 (a size Dynamo always specializes) to 2, so the first multi-image request recompiles even with `dynamic=True`. From huggingface/lora-fast#5 (generate different number of images without recompilation)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/huggingface/lora-fast/issues/5"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class FluxTransformer2DModel(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(dim, dim)
        self.context_embedder = nn.Linear(dim, dim)
        self.guidance_embedder = nn.Linear(1, dim)
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor, timestep: torch.Tensor, guidance: torch.Tensor) -> torch.Tensor:
        temb = self.guidance_embedder((guidance * 1000)[:, None]) + timestep[:, None]
        h = self.x_embedder(hidden_states) + temb[:, None, :]
        c = self.context_embedder(encoder_hidden_states)
        attn = torch.softmax(h @ torch.cat([c, h], dim=1).transpose(1, 2), dim=-1) @ torch.cat([c, h], dim=1)
        return self.proj_out(attn)


class FluxPipeline:
    def __init__(self, transformer: nn.Module) -> None:
        self.transformer = transformer

    def __call__(self, prompt_embeds: torch.Tensor, num_images_per_prompt: int = 1, num_inference_steps: int = 2, guidance_scale: float = 3.5) -> torch.Tensor:
        prompt_embeds = prompt_embeds.repeat(num_images_per_prompt, 1, 1)
        batch_size = prompt_embeds.shape[0]
        latents = torch.randn(batch_size, 4, 8)
        guidance = torch.full([1], guidance_scale).expand(batch_size)
        for t in torch.linspace(1.0, 0.0, num_inference_steps):
            noise_pred = self.transformer(latents, prompt_embeds, t.expand(batch_size), guidance)
            latents = latents - 0.5 * noise_pred
        return latents


def build() -> nn.Module:
    return FluxTransformer2DModel()


def step(model: nn.Module, i: int) -> None:
    pipe = FluxPipeline(model)
    n = [1, 1, 2, 2, 4, 1, 2, 4][i]  # warmup with one image, then requests for several
    with torch.no_grad():
        pipe(torch.randn(1, 3, 8), num_images_per_prompt=n)
