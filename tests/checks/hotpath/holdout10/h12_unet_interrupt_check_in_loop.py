"""Hazard: a ComfyUI-style UNet is compiled whole, but its output-block loop calls an interrupt check that takes a
`threading.Lock`; Dynamo cannot trace the lock, the break inside the loop skips the UNet frame, and Dynamo instead
compiles the shared `TimestepEmbedSequential.forward` frame for each input/middle/output block, whose channel counts
all differ, so the run recompiles block after block up to the recompile limit. From Comfy-Org/ComfyUI#8342 (TorchCompileModel
hits config.recompile_limit (8): tensor 'x' size mismatch at index 1, expected 1920, actual 1280)."""
from __future__ import annotations

import threading

import torch
from torch import nn

LABEL = "graph-break"
SOURCE = "https://github.com/Comfy-Org/ComfyUI/issues/8342"
OBSERVED = {"compiles_over_8_steps": 8, "graph_breaks": 1}

interrupt_processing_mutex = threading.RLock()
interrupt_processing = False


def throw_exception_if_processing_interrupted() -> None:
    """comfy.model_management.throw_exception_if_processing_interrupted in miniature."""
    global interrupt_processing
    with interrupt_processing_mutex:
        if interrupt_processing:
            interrupt_processing = False
            raise RuntimeError("interrupted")


class ResBlock(nn.Module):
    def __init__(self, channels: int, out_channels: int) -> None:
        super().__init__()
        self.in_layers = nn.Sequential(nn.GroupNorm(2, channels), nn.SiLU(), nn.Conv2d(channels, out_channels, 1))
        self.emb_layers = nn.Linear(8, out_channels)
        self.skip_connection = nn.Conv2d(channels, out_channels, 1)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.in_layers(x) + self.emb_layers(emb)[:, :, None, None]
        return self.skip_connection(x) + h


class TimestepEmbedSequential(nn.Sequential):
    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        for layer in self:
            x = layer(x, emb) if isinstance(layer, ResBlock) else layer(x)
        return x


class UNetModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        chans = (4, 8, 12)
        self.input_blocks = nn.ModuleList(
            TimestepEmbedSequential(ResBlock(c_in, c_out)) for c_in, c_out in zip((4,) + chans[:-1], chans)
        )
        self.middle_block = TimestepEmbedSequential(ResBlock(12, 12))
        skips = (12, 8, 4)
        self.output_blocks = nn.ModuleList()
        ch = 12
        for skip, out in zip(skips, (12, 8, 4)):
            self.output_blocks.append(TimestepEmbedSequential(ResBlock(ch + skip, out)))
            ch = out
        self.time_embed = nn.Linear(1, 8)
        self.out = nn.Conv2d(4, 4, 1)

    def forward(self, x: torch.Tensor, timesteps: torch.Tensor) -> torch.Tensor:
        emb = self.time_embed(timesteps[:, None])
        hs = []
        h = x
        for module in self.input_blocks:
            h = module(h, emb)
            hs.append(h)
        h = self.middle_block(h, emb)
        for module in self.output_blocks:
            throw_exception_if_processing_interrupted()
            h = torch.cat([h, hs.pop()], dim=1)
            h = module(h, emb)
        return self.out(h)


def build() -> nn.Module:
    return UNetModel()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():  # one sampler step
        model(torch.randn(1, 4, 4, 4), torch.full((1,), 999.0 - 100 * i))
