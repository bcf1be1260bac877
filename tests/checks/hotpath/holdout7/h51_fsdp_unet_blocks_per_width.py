"""Hazard: a UNet trained with FSDP compiles each wrapped down block as its own region; the blocks are instances of one `ResnetDownBlock` class at different channel widths, so they share one code object and the wider block's input fails the first block's static size guard (`size mismatch at index 1. expected 128, actual 256`), recompiling before automatic-dynamic settles. From pytorch/pytorch#138813 (strange recompilations on torch 2.5 + FSDP + UNet)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/pytorch/issues/138813"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 0}


class ResnetDownBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(2, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(2, out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.skip = nn.Conv2d(in_channels, out_channels, 1)
        self.downsample = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv1(nn.functional.silu(self.norm1(x)))
        h = self.conv2(nn.functional.silu(self.norm2(h)))
        return self.downsample(h + self.skip(x))


class FSDPUNetEncoder(nn.Module):
    """Each down block is its own FSDP unit (auto-wrap policy on the block class) and compiled separately."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(3, 4, 3, padding=1)
        self.down_blocks = nn.ModuleList([ResnetDownBlock(4, 4), ResnetDownBlock(4, 8), ResnetDownBlock(8, 16)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv_in(x)
        for block in self.down_blocks:
            h = block(h)
        return h


REGION = "down_blocks.*"


def build() -> nn.Module:
    return FSDPUNetEncoder()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 3, 16, 16))
    out.mean().backward()
