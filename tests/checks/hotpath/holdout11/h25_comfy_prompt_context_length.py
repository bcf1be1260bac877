"""Hazard: ComfyUI's text encoder turns each prompt into conditioning whose token length grows in 77-token chunks, and the sampler hands that context to the compiled diffusion model at fixed resolution; when an LLM prompt node writes a longer prompt, the new context length fails the size guard and the model recompiles on the next generation. From Comfy-Org/ComfyUI#6415 (frequent recompile with TorchCompileModel node even though the resolution is fixed; only the prompt changes)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "shape"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/6415"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class CrossAttention(nn.Module):
    def __init__(self, dim: int = 8, context_dim: int = 8) -> None:
        super().__init__()
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(context_dim, dim, bias=False)
        self.to_v = nn.Linear(context_dim, dim, bias=False)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, context: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        q, k, v = self.to_q(x), self.to_k(context), self.to_v(context)
        return self.to_out(torch.nn.functional.scaled_dot_product_attention(q, k, v))


class BasicTransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn2 = CrossAttention(dim)

    def forward(self, x: torch.Tensor, context: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        return x + self.attn2(self.norm(x), context, transformer_options)


class UNetModel(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.time_embed = nn.Linear(1, dim)
        self.input = nn.Linear(4, dim)
        self.blocks = nn.ModuleList(BasicTransformerBlock(dim) for _ in range(2))
        self.out = nn.Linear(dim, 4)

    def forward(self, x: torch.Tensor, timesteps: torch.Tensor, context: torch.Tensor, transformer_options: dict | None = None) -> torch.Tensor:
        transformer_options = transformer_options or {}
        h = self.input(x) + self.time_embed(timesteps[:, None, None].float())
        for block in self.blocks:
            h = block(h, context, transformer_options)
        return self.out(h)


def encode_prompt(n_tokens: int, generator: torch.Generator) -> torch.Tensor:
    """CLIPTextEncode: the prompt is split into 75-token chunks, each padded to 77 with start/end tokens."""
    chunks = max(1, -(-n_tokens // 75))
    return torch.randn(1, 77 * chunks, 8, generator=generator)


def build() -> nn.Module:
    return UNetModel().eval()


def step(model: nn.Module, i: int) -> None:
    # one queued generation per two steps; the prompt comes from an LLM node and varies in length every run
    prompt_tokens = [40, 40, 120, 120, 60, 60, 190, 190][i]
    g = torch.Generator().manual_seed(i // 2)
    context = encode_prompt(prompt_tokens, g)
    latent = torch.randn(1, 16, 4, generator=g)  # fixed 1024x1024 resolution
    sigma = torch.tensor([14.6 / (1 + i % 2)])
    with torch.no_grad():
        model(latent, sigma, context, transformer_options={"sigmas": sigma, "cond_or_uncond": [0]})
