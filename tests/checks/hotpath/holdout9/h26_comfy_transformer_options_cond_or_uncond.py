"""Hazard: ComfyUI's sampler passes `transformer_options` (a dict of Python lists and patches) into the compiled diffusion model; when the cond and uncond batches are run as separate calls (low VRAM), `cond_or_uncond` alternates between `[0]` and `[1]` at the same batch size, and the guards on the dict's contents recompile the model. From Comfy-Org/ComfyUI#11317 (disable guards on transformer_options when torch.compile)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "container"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/pull/11317"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class DiTBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attn = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        patches = transformer_options.get("patches", {})
        h = self.attn(x)
        for p in patches.get("attn1_output_patch", []):
            h = p(h, transformer_options)
        return x + h + self.mlp(x)


class DiffusionModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([DiTBlock() for _ in range(2)])
        self.cond_scale = nn.Parameter(torch.ones(2, 1, 8))

    def forward(self, x: torch.Tensor, timestep: torch.Tensor, transformer_options: dict) -> torch.Tensor:
        # per-sample conditioning row picked by whether each batch entry is cond (0) or uncond (1)
        scale = torch.stack([self.cond_scale[c] for c in transformer_options["cond_or_uncond"]])
        x = x * scale + timestep.view(-1, 1, 1)
        for i, block in enumerate(self.blocks):
            transformer_options["block_index"] = i
            x = block(x, transformer_options)
        return x


def calc_cond_batch(model: nn.Module, x: torch.Tensor, sigma: torch.Tensor, cond_or_uncond: list) -> torch.Tensor:
    transformer_options = {"patches": {}, "cond_or_uncond": cond_or_uncond[:], "sigmas": sigma}
    batch = x.repeat(len(cond_or_uncond), 1, 1)
    return model(batch, sigma.repeat(len(cond_or_uncond)), transformer_options)


def build() -> nn.Module:
    return DiffusionModel()


def step(model: nn.Module, i: int) -> None:
    sigma = torch.tensor([1.0 - i / 8])
    x = torch.randn(1, 4, 8)
    with torch.no_grad():
        # low VRAM: the cond and uncond halves of CFG run as two separate model calls
        cond = calc_cond_batch(model, x, sigma, [0])
        uncond = calc_cond_batch(model, x, sigma, [1])
        _ = uncond + 7.0 * (cond - uncond)
