"""Hazard: with FSDP + TP the compiled transformer block's input is the output of a functional all-gather, natively an `AsyncCollectiveTensor`, but on steps where the prefetch/overlap schedule already waited on it the block receives a resolved plain `Tensor`; Dynamo guards on the tensor class, so the input flipping between the two classes recompiles the block. From pytorch/pytorch#187073."""
from __future__ import annotations

import torch
from torch import nn
from torch.distributed._functional_collectives import AsyncCollectiveTensor

LABEL = "subclass"
SOURCE = "https://github.com/pytorch/pytorch/issues/187073"
OBSERVED = {"compiles_over_8_steps": 2, "graph_breaks": 0}
OBSERVED_BY_TORCH = {"2.14": {"compiles_over_8_steps": 1, "graph_breaks": 0}, "2.15": {"compiles_over_8_steps": 1, "graph_breaks": 0}}  # 2.14, 2.15 measured on the CPU-only machine (2.14.1+cu130, 2.15.0+cu132)


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
            # the overlap scheduler sometimes waited on the collective already, handing over a plain Tensor
            layer_input = gathered.wait() if overlap_resolved else gathered
            h = layer(layer_input)
        return h


REGION = "layers.*"


def build() -> nn.Module:
    return Model()


def step(model: nn.Module, i: int) -> None:
    out = model(torch.randn(2, 4, 8), overlap_resolved=(i % 3 == 2))
    out.sum().backward()
