"""Hazard: a streaming vocoder's forward is a generator that yields one decoded chunk at a time; Dynamo ignores frames that yield, so the compiled region silently runs eager every call: nothing is compiled and no graph break is recorded. From pytorch/pytorch#126360 (Dynamo ignores frame using yield)."""
from __future__ import annotations

from typing import Iterator

import torch
from torch import nn

LABEL = "generator"
SOURCE = "https://github.com/pytorch/pytorch/issues/126360"
OBSERVED = {"compiles_over_8_steps": 0, "graph_breaks": 0}
LATENT = "the generator frame is skipped outright: it runs eager with 0 compiles and no graph-break record, which neither count shows"


class StreamingVocoder(nn.Module):
    def __init__(self, dim: int = 8, chunk: int = 2) -> None:
        super().__init__()
        self.chunk = chunk
        self.pre = nn.Conv1d(dim, dim, kernel_size=1)
        self.up = nn.Linear(dim, dim)

    def forward(self, mel: torch.Tensor) -> Iterator[torch.Tensor]:
        for start in range(0, mel.shape[-1], self.chunk):
            frame = self.pre(mel[..., start : start + self.chunk])
            yield torch.tanh(self.up(frame.transpose(1, 2)))


def build() -> nn.Module:
    return StreamingVocoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        audio = torch.cat(list(model(torch.randn(1, 8, 6))), dim=1)
    assert audio.shape == (1, 6, 8)
