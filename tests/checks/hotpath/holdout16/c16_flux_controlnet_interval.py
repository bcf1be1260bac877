"""Clean: a reported failure that no longer reproduces on torch 2.13. The Flux transformer with ControlNet residuals computes how often to add a control sample with NumPy, `interval_control = int(np.ceil(len(self.transformer_blocks) / len(controlnet_block_samples)))`, inside the compiled forward. The report hit an error there under `fullgraph=True` on torch 2.5 and switched to `math.ceil`; on torch 2.13 the NumPy call on Python numbers is folded to a constant and the compiled transformer runs the denoising loop in one graph. From huggingface/diffusers#10290 (Flux + ControlNet cannot be compiled; fixed by `math.ceil`)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/issues/10290"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class FluxBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.ff(self.norm(hidden_states) * (1 + temb[:, None]))


class FluxTransformer2DModel(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 5) -> None:
        super().__init__()
        self.x_embedder = nn.Linear(4, dim)
        self.time_embed = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(FluxBlock(dim) for _ in range(depth))
        self.proj_out = nn.Linear(dim, 4)

    def forward(self, hidden_states, timestep, controlnet_block_samples=None):
        h = self.x_embedder(hidden_states)
        temb = self.time_embed(timestep[:, None])
        for index_block, block in enumerate(self.transformer_blocks):
            h = block(h, temb)
            if controlnet_block_samples is not None:
                interval_control = len(self.transformer_blocks) / len(controlnet_block_samples)
                interval_control = int(np.ceil(interval_control))
                h = h + controlnet_block_samples[index_block // interval_control]
        return self.proj_out(h)


class ControlNet(nn.Module):
    def __init__(self, dim: int = 8, n: int = 2) -> None:
        super().__init__()
        self.proj = nn.ModuleList(nn.Linear(4, dim) for _ in range(n))

    def forward(self, cond: torch.Tensor) -> list[torch.Tensor]:
        return [p(cond) for p in self.proj]


class Pipeline(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.transformer = FluxTransformer2DModel()
        self.controlnet = ControlNet()


REGION = "transformer"


def build() -> nn.Module:
    return Pipeline().eval()


@torch.no_grad()
def step(model: nn.Module, i: int) -> None:
    latents, cond = torch.randn(1, 6, 4), torch.randn(1, 6, 4)
    samples = model.controlnet(cond)
    t = torch.tensor([1.0 - i / 8])
    model.transformer(latents, t, controlnet_block_samples=samples)
