"""Hazard: LayerDrop written the fairseq way: in training, each encoder layer draws a random number as a tensor and
`continue`s past the layer when it falls under the drop rate, so Python branches on a tensor value inside the
compiled forward (a data-dependent graph break inside the layer loop, and the autograd graph changes shape step to
step). From facebookresearch/fairseq2#484 (LayerDrop revised so that dropped layers are still computed and the
autograd graph stays constant; the skip-the-layer version broke DDP/FSDP)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout16._helpers_a import EncoderLayer

LABEL = "item-branch"
SOURCE = "https://github.com/facebookresearch/fairseq2/pull/484"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class StandardTransformerEncoder(nn.Module):
    def __init__(self, dim: int = 8, num_layers: int = 3, layer_drop_p: float = 0.3) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(dim) for _ in range(num_layers))
        self.layer_drop_p = layer_drop_p
        self.layer_norm = nn.LayerNorm(dim)

    def forward(self, seqs: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            if self.training and self.layer_drop_p > 0.0:
                dropout_probability = torch.empty(()).uniform_()
                if dropout_probability < self.layer_drop_p:
                    continue
            seqs = layer(seqs)
        return self.layer_norm(seqs)


def build() -> nn.Module:
    return StandardTransformerEncoder().train()


def step(model: nn.Module, i: int) -> None:
    seqs = torch.randn(2, 5, 8)
    model(seqs).pow(2).mean().backward()
