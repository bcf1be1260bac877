"""Hazard: `enable_model_cpu_offload()` wraps each pipeline model's `forward` with accelerate's `CpuOffload` hook; the compiled transformer's call runs `pre_forward`, which offloads the previous model (`text_encoder.to("cpu")`), collects garbage and moves the transformer itself, all inside the compiled frame, so Dynamo breaks the graph in the hook (at `gc.collect` in `clear_device_cache`) on every denoising call. From huggingface/accelerate#3885 (CpuOffload pre_forward and post_forward should have @torch.compiler.disable())."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_b import cpu_offload_with_hook

LABEL = "hook"
SOURCE = "https://github.com/huggingface/accelerate/issues/3885"
OBSERVED = {"compiles_over_8_steps": 6, "graph_breaks": 3}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 9, "graph_breaks": 6}}  # measured on the H100 machine
REGION = "transformer"


class QwenImageTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.img_mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, hidden_states):
        return hidden_states + self.img_mlp(self.norm(hidden_states))


class QwenImageTransformer2DModel(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj_in = nn.Linear(dim, dim)
        self.block = QwenImageTransformerBlock(dim)
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states, encoder_hidden_states, timestep):
        h = self.proj_in(hidden_states) + encoder_hidden_states.mean(1, keepdim=True) + timestep[:, None, None]
        return self.proj_out(self.block(h))


class QwenImagePipeline(nn.Module):
    model_cpu_offload_seq = "text_encoder->transformer->vae"

    def __init__(self) -> None:
        super().__init__()
        self.text_encoder = nn.Sequential(nn.Embedding(32, 8), nn.Linear(8, 8))
        self.transformer = QwenImageTransformer2DModel()
        self.vae = nn.Linear(8, 8)

    def enable_model_cpu_offload(self, device: str = "cpu") -> None:
        hook = None
        for name in self.model_cpu_offload_seq.split("->"):
            _, hook = cpu_offload_with_hook(getattr(self, name), device, prev_module_hook=hook)
        self.final_offload_hook = hook

    def __call__(self, prompt_ids: torch.Tensor, num_inference_steps: int = 2) -> torch.Tensor:
        with torch.no_grad():
            prompt_embeds = self.text_encoder(prompt_ids)
            latents = torch.randn(1, 4, 8)
            for t in torch.linspace(1.0, 0.0, num_inference_steps):
                noise_pred = self.transformer(latents, prompt_embeds, t.reshape(1))
                latents = latents - 0.5 * noise_pred
            image = self.vae(latents)
        self.final_offload_hook.offload()
        return image


def build() -> nn.Module:
    pipe = QwenImagePipeline()
    pipe.enable_model_cpu_offload()
    return pipe


def step(model: nn.Module, i: int) -> None:
    model(torch.randint(0, 32, (1, 5)), num_inference_steps=1)
