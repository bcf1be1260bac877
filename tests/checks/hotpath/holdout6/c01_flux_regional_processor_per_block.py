"""Clean: regional compilation of a Flux-style transformer where every block's Attention holds its own stateless
processor object; the report saw one recompile per block on `___check_obj_id(self._modules['attn'].processor)`, but
torch 2.13 guards the processor by type only, so the block code compiles once and serves every block. From
pytorch/pytorch#163329 (region compile triggers recompile)."""

from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout6._helpers_a import Attention

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/163329"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "transformer_blocks.*"


class FluxTransformerBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim)  # each block builds its own FluxAttnProcessor()
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.attn(self.norm1(hidden_states) * (1 + temb[:, None]))
        return hidden_states + self.ff(self.norm2(hidden_states))


class FluxTransformer2DModel(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 3) -> None:
        super().__init__()
        self.time_embed = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(FluxTransformerBlock(dim) for _ in range(num_layers))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        temb = self.time_embed(timestep[:, None])
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, temb)
        return self.proj_out(hidden_states)


def build() -> nn.Module:
    return FluxTransformer2DModel().eval()


def step(model: nn.Module, i: int) -> None:
    latents = torch.randn(1, 4, 8)
    with torch.no_grad():  # one denoising step of the pipeline
        model(latents, torch.tensor([1.0 - i / 8]))
