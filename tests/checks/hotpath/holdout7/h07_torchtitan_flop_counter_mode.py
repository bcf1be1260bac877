"""Hazard: a torchtitan-style trainer measures MFU by running each training step under a fresh
`FlopCounterMode` (a TorchDispatchMode) owned by a tracker object; with a dispatch mode active the compiled blocks do
not run compiled. On torch 2.13 Dynamo silently runs the whole region eagerly (no compile, no graph-break record), the
other face of pytorch/pytorch#144787, where torch.compile inside a TorchDispatchMode always fails a guard."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_a import MFUTracker

LABEL = "dispatch-mode"
SOURCE = "https://github.com/pytorch/pytorch/issues/144787"
OBSERVED = {"compiles_over_8_steps": 0, "graph_breaks": 0}
LATENT = (
    "under an active TorchDispatchMode torch 2.13 does not compile the region at all: it runs eager with no compile "
    "start and no graph-break record, so neither number moves (the report saw a guard failure on every call instead)"
)


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.wqkv = nn.Linear(dim, 3 * dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.SiLU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.wqkv(self.attention_norm(x)).chunk(3, dim=-1)
        x = x + torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return x + self.ffn(x)


class Transformer(nn.Module):
    def __init__(self, n_layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleDict({str(i): TransformerBlock() for i in range(n_layers)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers.values():
            x = layer(x)
        return x


REGION = "layers.*"


def build() -> nn.Module:
    model = Transformer()
    model.mfu_tracker = MFUTracker()
    return model


def step(model: nn.Module, i: int) -> None:
    with model.mfu_tracker.measure():
        loss = model(torch.randn(1, 4, 8)).pow(2).mean()
        loss.backward()
    model.mfu_tracker.record()
