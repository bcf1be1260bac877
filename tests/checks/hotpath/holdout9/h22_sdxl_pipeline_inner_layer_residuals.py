"""Hazard: diffusion-pipe splits the SDXL UNet into pipeline-parallel `*InnerLayer` modules that receive one flat `inputs` tuple and unpack `*res_hidden_states` from it; each compiled InnerLayer instance gets a different number of residual tensors, so `len(inputs) == 7` fails from block to block and the shared forward recompiles until recompile_limit. From tdrussell/diffusion-pipe#439."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/tdrussell/diffusion-pipe/issues/439"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.11": {"compiles_over_8_steps": 1, "graph_breaks": 1}, "2.12": {"compiles_over_8_steps": 1, "graph_breaks": 1}}  # 2.11: measured on the H100 machine; 2.12 measured on the CPU-only machine (2.12.1+cu130)
REGION = "layers.*"


class UpBlock(nn.Module):
    def __init__(self, n_res: int, with_attn: bool, dim: int = 8) -> None:
        super().__init__()
        self.resnets = nn.ModuleList([nn.Linear(2 * dim, dim) for _ in range(n_res)])
        self.attn = nn.Linear(dim, dim) if with_attn else None


class UpBlockInnerLayer(nn.Module):
    def __init__(self, block: UpBlock) -> None:
        super().__init__()
        self.block = block

    def forward(self, inputs: tuple) -> tuple:
        hidden_states, timesteps, emb, encoder_hidden_states, *res_hidden_states, forward_upsample_size = inputs
        for resnet in self.block.resnets:
            res = res_hidden_states.pop()
            hidden_states = resnet(torch.cat([hidden_states, res], dim=-1)) + emb
            if self.block.attn is not None:
                hidden_states = hidden_states + self.block.attn(encoder_hidden_states)
        return (hidden_states, timesteps, emb, encoder_hidden_states, *res_hidden_states, forward_upsample_size)


class PipelineSDXL(nn.Module):
    """What `SDXLPipeline.to_layers()` hands to the DeepSpeed pipeline engine."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            [UpBlockInnerLayer(UpBlock(n, attn)) for n, attn in ((3, True), (3, True), (2, False))]
        )

    def forward(self, x: torch.Tensor, emb: torch.Tensor, ctx: torch.Tensor, residuals: list) -> torch.Tensor:
        inputs = (x, torch.zeros(1), emb, ctx, *residuals, None)
        for layer in self.layers:
            inputs = layer(inputs)
        return inputs[0]


def build() -> nn.Module:
    return PipelineSDXL()


def step(model: nn.Module, i: int) -> None:
    residuals = [torch.randn(2, 8) for _ in range(8)]
    loss = model(torch.randn(2, 8), torch.randn(2, 8), torch.randn(2, 8), residuals).sum()
    loss.backward()
