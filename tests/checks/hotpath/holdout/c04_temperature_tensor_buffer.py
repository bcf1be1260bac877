"""Clean: the loop anneals the temperature by writing into a tensor buffer in place (fill_), so the compiled graph reads a tensor, not a Python float. Look-alike of WhisperSpeech/WhisperSpeech#44 (its proposed fix: wrap T and top_k in tensors)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/WhisperSpeech/WhisperSpeech/issues/44"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class Sampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.logits = nn.Linear(8, 8)
        self.register_buffer("temperature", torch.tensor(1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.logits(x) / self.temperature, dim=-1)


def build() -> nn.Module:
    return Sampler()


def step(model: nn.Module, i: int) -> None:
    model.temperature.fill_(1.0 - 0.1 * i)
    with torch.no_grad():
        model(torch.randn(4, 8))
