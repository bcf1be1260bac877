"""Clean: the revised LayerDrop: every layer is always computed, and a tensor-valued drop decision selects between
the layer's output and its input with `torch.where`, so there is no Python branch on the random draw and the graph
is the same every step. From facebookresearch/fairseq2#484 (dropped layers still run so the autograd graph stays
constant)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import EncoderLayer

LABEL = None
SOURCE = "https://github.com/facebookresearch/fairseq2/pull/484"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class StandardTransformerEncoder(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 3, layer_drop_p: float = 0.3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(dim) for _ in range(num_layers))
        self.layer_drop_p = layer_drop_p
        self.layer_norm = nn.LayerNorm(dim)

    def forward(self, seqs: torch.Tensor) -> torch.Tensor:
        drop_layer = torch.zeros(len(self.layers), dtype=torch.bool)
        if self.training and self.layer_drop_p > 0.0:
            drop_layer = torch.rand(len(self.layers)) < self.layer_drop_p
        for idx, layer in enumerate(self.layers):
            layer_output = layer(seqs)
            seqs = torch.where(drop_layer[idx], seqs, layer_output)
        return self.layer_norm(seqs)


def build() -> nn.Module:
    return StandardTransformerEncoder().train()


def step(model: nn.Module, i: int) -> None:
    seqs = torch.randn(2, 5, 8)
    model(seqs).pow(2).mean().backward()
