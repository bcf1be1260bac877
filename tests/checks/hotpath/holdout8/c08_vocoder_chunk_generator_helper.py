"""Clean: the same vocoder, but the chunking generator is a helper consumed inside a plain forward that returns the stitched tensor; Dynamo inlines the generator and the forward compiles once. Look-alike of h08, from pytorch/pytorch#126360."""
from __future__ import annotations

from typing import Iterator

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/126360"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class StreamingVocoder(nn.Module):
    def __init__(self, dim: int = 8, chunk: int = 2) -> None:
        super().__init__()
        self.chunk = chunk
        self.pre = nn.Conv1d(dim, dim, kernel_size=1)
        self.up = nn.Linear(dim, dim)

    def chunks(self, mel: torch.Tensor) -> Iterator[torch.Tensor]:
        for start in range(0, mel.shape[-1], self.chunk):
            yield mel[..., start : start + self.chunk]

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        out = [torch.tanh(self.up(self.pre(c).transpose(1, 2))) for c in self.chunks(mel)]
        return torch.cat(out, dim=1)


def build() -> nn.Module:
    return StreamingVocoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        audio = model(torch.randn(1, 8, 6))
    assert audio.shape == (1, 6, 8)
