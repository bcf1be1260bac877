"""Clean: the same accelerate `AlignDevicesHook` offload, but as model-level offload (one hook on the whole DiT, `enable_model_cpu_offload` style) while only the repeated transformer blocks are compiled (`compile_repeated_blocks` style), so the compile-disabled hook entry points run outside every compiled region. From vladmandic/sdnext#4837."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout13._helpers_b import AlignDevicesHook, add_hook_to_module

LABEL = None
SOURCE = "https://github.com/vladmandic/sdnext/issues/4837"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = "transformer_blocks.*"


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, hidden_states: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.ff(self.norm(hidden_states) + temb)


class DiTModel(nn.Module):
    def __init__(self, dim: int = 8, depth: int = 3) -> None:
        super().__init__()
        self.time_proj = nn.Linear(1, dim)
        self.transformer_blocks = nn.ModuleList(TransformerBlock(dim) for _ in range(depth))
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, hidden_states: torch.Tensor, timestep: torch.Tensor) -> torch.Tensor:
        temb = self.time_proj(timestep[:, None])
        for block in self.transformer_blocks:
            hidden_states = block(hidden_states, temb[:, None, :])
        return self.proj_out(hidden_states)


def build() -> nn.Module:
    model = DiTModel().eval()
    # model-level offload: one AlignDevicesHook on the whole component, none on the compiled blocks
    add_hook_to_module(model, AlignDevicesHook(execution_device="cpu", io_same_device=True, offload=True))
    return model


def step(model: nn.Module, i: int) -> None:
    latents = torch.randn(1, 4, 8)
    t = torch.tensor([1000.0 - 125.0 * i])
    with torch.no_grad():
        model(latents, t)
