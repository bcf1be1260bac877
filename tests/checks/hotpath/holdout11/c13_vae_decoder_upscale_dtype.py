"""Clean: the VAE decoder reads its upsampling dtype with `next(iter(self.up_blocks.parameters())).dtype` in the middle of `forward`; reported as a graph break (huggingface/diffusers#12501, VAE Decoder next(iter(..)) causes graph break, seen with a lazy-tensor backend), but on torch 2.13 Dynamo traces the parameter generator and the compiled decoder is one graph, compiled once."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/huggingface/diffusers/issues/12501"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class UpDecoderBlock2D(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(2, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        hidden_states = hidden_states + self.conv(torch.nn.functional.silu(self.norm(hidden_states)))
        return torch.nn.functional.interpolate(hidden_states, scale_factor=2.0, mode="nearest")


class Decoder(nn.Module):
    def __init__(self, in_channels: int = 4, channels: int = 8, out_channels: int = 3) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(in_channels, channels, 3, padding=1)
        self.mid_block = nn.Conv2d(channels, channels, 3, padding=1)
        self.up_blocks = nn.ModuleList(UpDecoderBlock2D(channels) for _ in range(2))
        self.conv_norm_out = nn.GroupNorm(2, channels)
        self.conv_out = nn.Conv2d(channels, out_channels, 3, padding=1)

    def forward(self, sample: torch.Tensor, latent_embeds: torch.Tensor | None = None) -> torch.Tensor:
        sample = self.conv_in(sample)
        upscale_dtype = next(iter(self.up_blocks.parameters())).dtype
        sample = self.mid_block(sample)
        sample = sample.to(upscale_dtype)
        for up_block in self.up_blocks:
            sample = up_block(sample)
        sample = self.conv_norm_out(sample)
        sample = torch.nn.functional.silu(sample)
        return self.conv_out(sample)


def build() -> nn.Module:
    return Decoder().eval()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(1, 4, 4, 4))
