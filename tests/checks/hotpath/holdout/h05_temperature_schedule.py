"""Hazard: the loop anneals a Python float temperature on the module; forward divides the logits by it. From WhisperSpeech/WhisperSpeech#44: Make `torch.compile` more robust to changes in `T` and `top_k`."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "outside"
SOURCE = "https://github.com/WhisperSpeech/WhisperSpeech/issues/44"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}


class Sampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.logits = nn.Linear(8, 8)
        self.temperature = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.logits(x) / self.temperature, dim=-1)


def build() -> nn.Module:
    return Sampler()


def step(model: nn.Module, i: int) -> None:
    model.temperature = 1.0 - 0.1 * i  # annealed every step
    with torch.no_grad():
        model(torch.randn(4, 8))
