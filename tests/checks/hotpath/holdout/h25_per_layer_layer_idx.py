"""Hazard: each decoder layer stores its own layer_idx and reads it in forward; the layers are compiled one by one (REGION "layers.*"), so every layer is a new specialisation. From pytorch/pytorch#128071: [user empathy day 2][based] torch.compile issues (guard `...layer_idx == (8, 'conv')`)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = "per-instance"
SOURCE = "https://github.com/pytorch/pytorch/issues/128071"
OBSERVED = {"compiles_over_8_steps": 4, "graph_breaks": 0}
REGION = "layers.*"


class DecoderLayer(nn.Module):
    def __init__(self, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.mlp = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / (self.layer_idx + 1)  # depth-scaled residual
        return x + scale * self.mlp(x)


class Decoder(nn.Module):
    def __init__(self, n_layers: int = 4) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(i) for i in range(n_layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


def build() -> nn.Module:
    return Decoder()


def step(model: nn.Module, i: int) -> None:
    with torch.no_grad():
        model(torch.randn(4, 8))
