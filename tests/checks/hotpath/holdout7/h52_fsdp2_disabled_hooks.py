"""Hazard: compiling a whole model whose transformer blocks were wrapped with FSDP2 `fully_shard`: the unshard/reshard forward pre-hook and forward hook that `fully_shard` registers on every block are `torch._dynamo.disable`d, so the compiled forward breaks the graph around every block call. From pytorch/pytorch#181924 (custom-op-based FSDP2 hooks for torch.compile compatibility)."""
from __future__ import annotations

import torch
from torch import nn

from tests.checks.hotpath.holdout7._helpers_c import fully_shard

LABEL = "hook"
SOURCE = "https://github.com/pytorch/pytorch/pull/181924"
OBSERVED = {"compiles_over_8_steps": 3, "graph_breaks": 1}


class Block(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Block() for _ in range(2)])
        self.output = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.output(x)


def build() -> nn.Module:
    model = Transformer()
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    return model


def step(model: nn.Module, i: int) -> None:
    model(torch.randn(2, 4, 8)).pow(2).mean().backward()
