"""Clean: the FSDP + TP model of pytorch/pytorch#187073 with the collective always awaited before the compiled block (`AsyncCollectiveTensor.wait()` on every step, whatever the overlap schedule did), so each block always receives a plain `Tensor` and the class guard never flips."""
from __future__ import annotations

import torch
from torch import nn
from torch.distributed._functional_collectives import AsyncCollectiveTensor

LABEL = None
SOURCE = "https://github.com/pytorch/pytorch/issues/187073"
OBSERVED = {"compiles_over_8_steps": 1, "graph_breaks": 0}


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(dim)
        self.wqkv = nn.Linear(dim, 3 * dim)
        self.wo = nn.Linear(dim, dim)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        q, k, v = self.wqkv(self.attention_norm(h)).chunk(3, dim=-1)
        h = h + self.wo(torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v)
        return h + self.ffn(h)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok_embeddings = nn.Linear(8, 8)
        self.layers = nn.ModuleList([TransformerBlock()])

    def forward(self, x: torch.Tensor, overlap_resolved: bool) -> torch.Tensor:
        h = self.tok_embeddings(x)
        # sequence-parallel all-gather of the activations (functional collective => AsyncCollectiveTensor)
        gathered = AsyncCollectiveTensor(h)
        for layer in self.layers:
            # resolve the collective outside the compiled block, whether or not the overlap scheduler already did
            # (overlap_resolved only tells whether that wait is already a no-op)
            layer_input = gathered.wait()
            h = layer(layer_input)
        return h


REGION = "layers.*"


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 4, 8), overlap_resolved=(i % 3 == 2))
    out.sum().backward()
