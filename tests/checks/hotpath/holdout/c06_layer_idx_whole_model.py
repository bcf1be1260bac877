"""Clean: the same per-layer layer_idx reads as the per-layer hazard, but the decoder is compiled whole (one region at the root), so each layer_idx is a constant of one graph. Look-alike of pytorch/pytorch#128071 (layer_idx guards when blocks are compiled separately)."""
from __future__ import annotations

import torch
from torch import nn

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/128071"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}
REGION = ""


class DecoderLayer(nn.Module):
    def __init__(self, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.mlp = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 / (self.layer_idx + 1)
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
